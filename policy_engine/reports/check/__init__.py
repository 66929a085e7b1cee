"""``check``'s formats: text, JSON, SARIF, Markdown."""
