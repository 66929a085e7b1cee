"""``reported_errors()``: a CDK app's construct errors and failed checks as one line each, never a traceback.

A construct refusing its props raises ``QuotaConstructError`` in Python; a failed check (a plugin's or a
topology's error) reaches Python as jsii's ``RuntimeError`` around CDK's report. Wrapped around an app's
body (``with reported_errors(): ... app.synth()``), each is printed as ``error: ...`` lines on stderr and the
app exits 2 (a construct refused its props) or 1 (synthesis found errors), which ``cdk synth`` reports as a
failed app. ``app.py`` and ``examples/hand_built/app.py`` use it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from policy_engine.reports.kit.safe_text import visible
from quota_constructs.errors import QuotaConstructError

EXIT_FINDINGS, EXIT_BAD_INPUT = 1, 2


def error_line(error: ValueError) -> str:
    """``error: MESSAGE (construct PATH)``: the construct's message with where it is, escaped for a terminal."""
    path = error.path if isinstance(error, QuotaConstructError) else None
    return f"error: {visible(str(error))}" + (f" (construct {visible(path)})" if path else "")


@contextmanager
def reported_errors(stream: TextIO | None = None) -> Iterator[None]:
    """Run a CDK app's body; print its construct errors and synthesis failures one line each and exit 2 or 1."""
    out = stream or sys.stderr
    try:
        yield
    except ValueError as error:  # QuotaConstructError, and the engine's own refusals
        print(error_line(error), file=out)
        raise SystemExit(EXIT_BAD_INPUT) from None
    except RuntimeError as error:  # jsii: CDK's synthesis errors (validations and plugins) as one message
        for line in str(error).splitlines():
            if line.strip():
                print(f"error: {visible(line.strip())}", file=out)
        raise SystemExit(EXIT_FINDINGS) from None
