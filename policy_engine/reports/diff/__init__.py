"""``diff``: its view (the verdict, each section's lines, the replay's impact, ``view``) and its formats: text, JSON,
Markdown."""
