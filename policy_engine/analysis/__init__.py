"""What a topology guarantees: the borrow graph, the guarantees' proofs, the rules, the checks and the summary."""
