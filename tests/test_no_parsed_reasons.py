"""Causes are values: no code matches a reason, message or subject with a regular expression or a prefix.

A reason the simulator wrote and code parsed back broke silently whenever its wording changed
(``re.match(r"preempted \\((\\S+)\\) by (\\S+)", reason)``). This test reads every module of both
packages with ``ast`` and fails on a regular-expression call, or a ``startswith``/``endswith``/``split``
family call, whose subject is rendered text: a variable or attribute named like a reason, message, subject, problem
or error (``reason``, ``status_reason``, ``error.message``, ``problem``...), or whatever a function calls a
value it took from one (``for line in error.problems``, ``text = str(error)``, ``head = problem``). Code compares causes
(``policy_engine.simulation.causes.Cause``) and kinds instead. ``ALLOWED`` lists the legitimate
parsing of text that arrives as text, each with why.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("policy_engine", "quota_constructs")

#: Variables that hold a reason, a message or what a call was about.
NAMED_LIKE_TEXT = re.compile(r"reason|message|subject|\bmsg\b|statusreason|problem|error|\bexc\b|rendered|"
                             r"finding", re.IGNORECASE)
#: ``re`` functions and compiled-pattern methods that match or take text apart.
REGEX_CALLS = {"match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
#: ``str`` methods that parse a string back by its wording.
PREFIX_CALLS = {"startswith", "endswith", "split", "rsplit", "partition", "rpartition", "removeprefix",
                "removesuffix", "find", "rfind", "index", "rindex"}

#: (module, function) -> why it may take such text apart. Legitimate parsing of text that arrives as text
#: (YAML scalars in ``safe_yaml``, ARNs in ``arns``/``shapes``, CSV cells) reads variables named for what
#: they hold (``scalar``, ``arn``, ``value``), so it needs no entry; one named like a reason would go here.
ALLOWED: dict[tuple[str, str], str] = {
    ("policy_engine/reports/check/view.py", "_load_problem"):
        "a plain line from a reader that does not locate its problems yet: only its leading SOURCE is dropped",
    ("policy_engine/simulation/profiles/fitting.py", "_read_json_lines"):
        "pyarrow's ArrowInvalid says which inference failed only in its text",
}


def _name(node: ast.expr) -> str | None:
    """The identifier an expression ends in: ``reason``, ``error.subject`` -> ``subject``, ``str(reason)``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Name) and node.func.id == "str":
        return _name(node.args[0])
    if isinstance(node, ast.Subscript):
        return _name(node.value)
    return None


def _text_like(node: ast.expr, tainted: frozenset[str] | set[str] = frozenset()) -> bool:
    """Rendered text: named like it, a local that took its value from such text, or ``str()`` of an error."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
        return _text_like(node.args[0], tainted)
    if isinstance(node, ast.Name) and node.id in tainted:
        return True
    name = _name(node)
    return name is not None and NAMED_LIKE_TEXT.search(name) is not None


def _targets(node: ast.expr) -> list[str]:
    """The local names an assignment or loop target binds."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple | ast.List):
        return [name for item in node.elts for name in _targets(item)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return []


def _tainted(function: ast.AST) -> set[str]:
    """The locals of ``function`` that hold rendered text under another name (to a fixed point)."""
    tainted: set[str] = set()
    while True:
        before = len(tainted)
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and _text_like(node.value, tainted):
                tainted.update(name for target in node.targets for name in _targets(target))
                continue
            source = (node.value if isinstance(node, ast.AnnAssign | ast.NamedExpr)
                      else node.iter if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) else None)
            if source is not None and _text_like(source, tainted):
                tainted.update(_targets(node.target))  # type: ignore[attr-defined]  # each kind above has a target
        if len(tainted) == before:
            return tainted


class _Finder(ast.NodeVisitor):
    def __init__(self, module: str, allowed: dict[tuple[str, str], str]) -> None:
        self.module = module
        self.allowed = allowed
        self.function = "<module>"
        self.tainted: set[str] = set()
        self.found: list[tuple[str, str, str]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer, self.function = self.function, node.name
        outer_tainted, self.tainted = self.tainted, self.tainted | _tainted(node)
        self.generic_visit(node)
        self.function, self.tainted = outer, outer_tainted

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]  # the same walk for both kinds

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            regex = func.attr in REGEX_CALLS and any(_text_like(arg, self.tainted) for arg in node.args)
            prefix = func.attr in PREFIX_CALLS and _text_like(func.value, self.tainted)
            if (regex or prefix) and (self.module, self.function) not in self.allowed:
                self.found.append((self.module, self.function, f"{self.module}:{node.lineno}: {ast.unparse(node)}"))
        self.generic_visit(node)


def _calls(root: Path, allowed: dict[tuple[str, str], str]) -> list[tuple[str, str, str]]:
    found: list[tuple[str, str, str]] = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            module = path.relative_to(root).as_posix()
            finder = _Finder(module, allowed)
            finder.visit(ast.parse(path.read_text(encoding="utf-8"), module))
            found += finder.found
    return found


def parsed_text(root: Path) -> list[str]:
    """Every call in ``root``'s packages that matches or takes apart a reason, message or subject."""
    return [where for _, _, where in _calls(root, ALLOWED)]


def test_no_reason_message_or_subject_is_parsed_back() -> None:
    assert parsed_text(ROOT) == []


def test_every_allowed_entry_still_parses_something() -> None:
    """An entry whose code was fixed goes too, so the list never allows more than it must."""
    flagged = {(module, function) for module, function, _ in _calls(ROOT, allowed={})}
    assert set(ALLOWED) <= flagged


@pytest.mark.parametrize("source", [
    'found = re.match(r"preempted \\((\\S+)\\) by (\\S+)", reason)',
    'if reason.startswith(("FAILED: attempt", "attempt ")): pass',
    'hit = _PATTERN.search(error.subject)',
    'first = record.status_reason.split(";")[0]',
    'ok = str(exc.message).endswith("denied")',
    'source = [line.split(": Resources.", 1)[0] for line in error.problems]',
    'text = str(error)\n    head = text.partition(":")',
    'hit = _PATTERN.search(problem)',
])
def test_it_finds_each_form_of_parsing(tmp_path: Path, source: str) -> None:
    module = tmp_path / "policy_engine" / "sample.py"
    module.parent.mkdir()
    (tmp_path / "quota_constructs").mkdir()
    module.write_text(f"import re\n\ndef f(reason, error, record, exc):\n    {source}\n", encoding="utf-8")
    assert len(parsed_text(tmp_path)) == 1


def test_matching_other_text_is_not_flagged(tmp_path: Path) -> None:
    module = tmp_path / "policy_engine" / "sample.py"
    module.parent.mkdir()
    (tmp_path / "quota_constructs").mkdir()
    module.write_text('import re\n\ndef f(arn, scalar):\n'
                      '    return arn.startswith("arn:") or re.fullmatch("[0-9]+", scalar)\n', encoding="utf-8")
    assert parsed_text(tmp_path) == []
