"""``compare``: its view (the bill table and the verdict, ``view``) and its formats: text, JSON, Markdown and the HTML
page."""
