"""``diff``'s formats: text, JSON, Markdown."""
