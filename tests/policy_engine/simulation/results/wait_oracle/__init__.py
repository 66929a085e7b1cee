"""The "why jobs waited" attribution as it was before it was rewritten for speed (issue 38): a test oracle.

``wait_causes`` and ``wait_sweep`` here are the object-per-stretch implementation, kept verbatim but for their
imports (this sweep runs from source, never compiled); ``tests/policy_engine/simulation/results/test_wait_oracle.py``
compares every per-share, per-cause and per-job figure of the production attribution with it. When the wait
definition changes (docs/simulator.md, "Why jobs waited"), change the oracle with it, in the same commit.
"""
