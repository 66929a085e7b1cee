"""``sweep``'s formats: text, JSON, CSV."""
