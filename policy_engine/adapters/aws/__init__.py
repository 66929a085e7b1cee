"""Read-only connectors to an AWS account: import, drift, snapshot, history.

A connector never decides scheduling semantics: it turns API shapes into the model
(and back). Only ``clients`` imports boto3, and only when a command talks to AWS, so
``--from-template`` and ``check FILE.template.json`` work without credentials.
"""
