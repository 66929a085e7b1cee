"""``graph``: the borrow graph drawn with Graphviz."""
