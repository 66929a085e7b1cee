"""``explain``: one share in sentences (and why its jobs waited), and its formats: text, JSON."""
