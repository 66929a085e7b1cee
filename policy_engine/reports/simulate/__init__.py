"""``simulate``'s formats: text, JSON, Markdown."""
