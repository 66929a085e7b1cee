"""``tune``: its view (the answer, the evidence and the Pareto front, ``view``) and its formats: text, JSON, and the
HTML page of ``--report``."""
