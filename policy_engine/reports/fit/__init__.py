"""``fit``'s formats: text, JSON."""
