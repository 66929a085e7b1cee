"""Tables several reports share (costs, targets, instance types, training plans, waits, before/after, jobs, a
sweep's runs, promise lines), in every format."""
