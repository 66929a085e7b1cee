"""``tune``'s formats: text, JSON."""
