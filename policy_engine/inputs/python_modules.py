"""Loading a topology from a Python module: run it as ``cdk synth`` runs a CDK app, and report what goes wrong.

The module's prints go to stderr (stdout may carry ``--format json``); ``sys.exit``/``os._exit`` and any
exception become problems at the module's own line, never a traceback or an exit status CI would trust.
Loading a module runs its code: only load modules you trust.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from policy_engine.foundation.diagnostics import LoadError, Problem
from policy_engine.foundation.model import Topology
from policy_engine.inputs import input_files
from policy_engine.inputs.schema_errors import MODELS, describe, fields_at
from policy_engine.inputs.topology_data import topology_from_objects


def _python_error_problems(source: str, error: BaseException, doing: str) -> list[Problem]:
    """One problem per error of an exception raised by a user's topology module, at its line in that file."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if Path(frame.filename) == Path(source)]
    line = frames[-1].lineno if frames else None
    if isinstance(error, ValidationError):
        return [
            Problem(source, line, (error.title, *item["loc"]),
                    describe(item, fields_at(MODELS.get(error.title, Topology), tuple(item["loc"]))))
            for item in error.errors()
        ]
    return [Problem(source, line, (), f"{doing} failed: {type(error).__name__}: {error}")]


class _ModuleExited(BaseException):
    """Raised instead of ``os._exit`` while a topology module runs, so the process survives to report it."""

    def __init__(self, code: Any):
        super().__init__(code)
        self.code = code


@contextlib.contextmanager
def _stdout_descriptor_to_stderr() -> Iterator[None]:
    """In a real process, also point file descriptor 1 at stderr: ``os.write(1, ...)`` and child processes."""
    if sys.stdout is not sys.__stdout__ or sys.stdout is None or sys.stderr is None:
        yield  # in-process (tests): sys.stdout is already someone else's buffer
        return
    try:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(sys.stderr.fileno(), 1)
    except (OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def _running_user_code(source: str, doing: str) -> Iterator[None]:
    """Run a topology module's code: its prints go to stderr (stdout may carry ``--format json``), and
    ``sys.exit``/``os._exit`` become a problem instead of ending the command with a status CI would trust."""

    def refuse_exit(status: int) -> NoReturn:
        raise _ModuleExited(status)

    real_exit = os._exit
    os._exit = refuse_exit
    try:
        with _stdout_descriptor_to_stderr(), contextlib.redirect_stdout(sys.stderr):
            yield
    except (SystemExit, _ModuleExited) as exited:
        how = "os._exit" if isinstance(exited, _ModuleExited) else "sys.exit"
        raise LoadError([Problem(source, None, (), f"topology module exited while {doing} ({how}({exited.code!r})); "
                                 "a topology module must define TOPOLOGY, not end the process")]) from None
    finally:
        os._exit = real_exit


#: What a user's module may raise that is not its own failure: an exit (reported by ``_running_user_code``), Ctrl-C.
_LEAVING = (SystemExit, KeyboardInterrupt, _ModuleExited)


def load_module(path: Path) -> Topology:
    """Run ``path`` (a regular, UTF-8 file) and take its ``TOPOLOGY`` (or ``topology``; a callable is called).

    Loading a module runs its code, as ``cdk synth`` runs a CDK app: only load modules you trust.
    """
    source = str(path)
    try:
        text = input_files.read_text(path, input_files.MODULE)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    spec = importlib.util.spec_from_file_location(f"_batch_quota_topology_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise LoadError([Problem(source, None, (), "cannot import as a Python module")])
    module = importlib.util.module_from_spec(spec)
    with _running_user_code(source, "importing the module"):
        try:
            exec(compile(text, source, "exec"), module.__dict__)
        except LoadError as error:
            raise LoadError([Problem(source, None, (), problem) for problem in error.problems]) from None
        except SyntaxError as error:
            failed = f"importing the module failed: SyntaxError: {error.msg}"
            raise LoadError([Problem(source, error.lineno, (), failed)]) from None
        except _LEAVING:
            raise
        except BaseException as error:  # a user's module: report, never a traceback
            raise LoadError(_python_error_problems(source, error, "importing the module")) from None
    value = module.__dict__.get("TOPOLOGY")
    value = module.__dict__.get("topology") if value is None else value
    if callable(value) and not isinstance(value, Topology):
        with _running_user_code(source, "calling TOPOLOGY()"):
            try:
                value = value()
            except _LEAVING:
                raise
            except BaseException as error:  # a user's code: report, never a traceback
                raise LoadError(_python_error_problems(source, error, "calling TOPOLOGY()")) from None
    if not isinstance(value, Topology):
        raise LoadError([Problem(source, None, (), "the module must define TOPOLOGY (or topology) as a policy_engine "
                                 "Topology")])
    return topology_from_objects(value, source)
