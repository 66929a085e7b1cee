"""What every renderer builds on: the format tables, Markdown, safe text, the terminal, Vega, and what
commands hand renderers."""
