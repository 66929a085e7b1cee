"""``batch-quota serve``: a local AWS Batch endpoint (REST-JSON) for quota shares, scheduled by the simulator.

protocol (routes and shapes from botocore's ``batch`` model) | validation (the shapes' constraints) |
account (resources and the policy engine's AWS rules) | scheduler (the simulator driven live, clock) |
jobs (service-job records and their indexes) | handlers (one function per operation) | store (SQLite) |
control (``/_batch-quota/``) | app (the ASGI application) | server (uvicorn).
"""
