"""What the endpoint's handlers build on: the account's resources, service-job records, the live scheduler,
SageMaker's training-plan reads, and AWS's wire protocol, errors and wording."""
