"""``batch-quota serve``: a local AWS Batch endpoint (REST-JSON) for quota shares, scheduled by the simulator.

protocol (routes and shapes from botocore's ``batch`` model) | validation (the shapes' constraints) |
errors (AWS's error responses) | account (resources and the policy engine's AWS rules) |
jobs (service-job records and their list indexes) | scheduler (the simulator driven live, the clock) |
handlers (one module per resource family, one function per operation) |
operations (the registry of them all) | service (state and the call entry point) | store (SQLite) |
control (``/_batch-quota/``) | app (the ASGI application) | server (uvicorn, in a thread for tests).
"""
