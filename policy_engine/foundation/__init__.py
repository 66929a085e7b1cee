"""The foundation: the topology model, AWS's limits as data, instance types, units, diagnostics and findings.

Everything else builds on these; they import nothing else of ``policy_engine``."""
