"""Renderers: turn what a command found (a ``CheckReport``, a ``SimulationResult``, a ``ChangeReport``,
an explained share) into text, JSON, SARIF, Markdown, HTML, charts and pictures.

One folder per command (``check/``, ``diff/``, ...): its view (``view.py``, the typed view model: the verdict, the
sections, the rows, read once from the domain) and one module per format that imports its view, ``kit/`` and the
shared ``tables/`` and ``page/``, never another format nor a domain module. The ``--format`` choices of every
command and the renderer module behind each are the rows of ``registry``. Importing this package imports none of
its modules: each command loads only the renderer it runs, so ``check --format markdown`` never pays for rich, the
simulator or matplotlib.
"""
