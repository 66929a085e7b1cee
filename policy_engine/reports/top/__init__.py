"""``top``'s screen and its JSON."""
