"""The outside world: read-only connectors to an AWS account (``aws``) and a local AWS Batch endpoint (``endpoint``)."""
