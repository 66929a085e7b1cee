"""What a simulation run is built from: scenario and job files, generated workloads, live state, exact types."""
