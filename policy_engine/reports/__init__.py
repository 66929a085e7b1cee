"""Renderers: turn what a command found (a ``CheckReport``, a ``SimulationResult``, a ``ChangeReport``,
an explained share) into text, JSON, SARIF, Markdown, HTML, charts and pictures.

One module per format and subject (``check_json``, ``simulate_text``, ...). The ``--format``
choices of ``check``, ``simulate`` and ``explain`` and the renderer behind each are the tables
in ``registry``. Importing this package imports none of its modules: each command loads only
the renderer it runs, so ``check --format markdown`` never pays for rich, the simulator or
matplotlib.
"""
