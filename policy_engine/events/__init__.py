"""EventBridge events: the documented patterns, the service-job events the scheduler's changes
make, and where they go."""
