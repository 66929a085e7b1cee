"""The borrow graph and the guarantees' proofs: who can lend what to whom, and what each team can count on."""
