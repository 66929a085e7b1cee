"""The ``QuotaMonitoring`` Lambda function's code (``index.py``, boto3 only: staged as the function's asset)."""
