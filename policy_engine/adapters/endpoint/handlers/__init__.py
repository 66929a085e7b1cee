"""One module per resource family, one function per operation: input as botocore sends it, output in the
operation's shape. ``policy_engine.adapters.endpoint.operations`` imports them all (which registers them)."""
