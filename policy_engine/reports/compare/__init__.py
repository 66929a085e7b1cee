"""``compare``'s formats: text, JSON, Markdown and the HTML page."""
