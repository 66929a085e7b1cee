"""The deploy rehearsal: what the CDK CLI needs of STS, SSM, S3, CloudFormation and CloudWatch Logs to deploy,
diff and destroy an app against ``serve`` (docs/rehearsal.md). The Batch resources go through the endpoint's
own handlers."""
