"""``drift``'s formats: text, JSON, Markdown."""
