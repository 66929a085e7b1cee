"""``compare``: designs (topologies) side by side on one workload, each run from time 0, per share."""
