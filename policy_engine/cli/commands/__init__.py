"""One module per ``batch-quota`` sub-command; ``policy_engine.cli.app`` registers them."""
