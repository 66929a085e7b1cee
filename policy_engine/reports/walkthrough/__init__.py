"""``walkthrough``'s formats: text, JSON."""
