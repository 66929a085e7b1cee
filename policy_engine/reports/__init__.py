"""Renderers: turn a ``CheckReport`` (and later simulation results) into text, JSON, SARIF and more.

Each module renders one format; ``check_*`` modules expose ``render(report, ...) -> str``.
"""
