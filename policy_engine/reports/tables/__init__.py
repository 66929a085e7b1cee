"""Tables several reports share (costs, targets, instance types, training plans, waits, before/after), in every
format."""
