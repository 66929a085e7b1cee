"""``generate``'s formats: text, JSON."""
