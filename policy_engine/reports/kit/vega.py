"""The charting library the HTML report inlines: Vega, Vega-Lite and Vega's CSP-safe expression interpreter.

Vendored minified builds from the npm registry (BSD-3-Clause; licences beside them in
``vendor/``), read from the installed package, so a report opens offline and needs no
Node.js. Vega normally compiles its expressions with ``new Function``; the page parses
specs with ``{ast: true}`` and evaluates them with ``vega-interpreter`` instead, so its
Content-Security-Policy can forbid ``unsafe-eval``.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

VENDOR = resources.files("policy_engine.reports") / "vendor"
FILES = ("vega.min.js", "vega-lite.min.js", "vega-interpreter.js")
_MAP = re.compile(r"^//# sourceMappingURL=.*$", re.MULTILINE)
_IMPORT = "import { ascending, isString, DisallowedObjectProperties } from 'vega-util';"
_EXPORT = "export { expression as expressionInterpreter };"


def _interpreter_script(module: str) -> str:
    """vega-interpreter ships only as an ES module importing vega-util: bind it to the ``vega`` global instead."""
    if _IMPORT not in module or _EXPORT not in module:
        raise RuntimeError("vendor/vega-interpreter.js changed shape: update policy_engine.reports.kit.vega")
    body = module.replace(_IMPORT, "const { ascending, isString, DisallowedObjectProperties } = vega;")
    return "(function () {\n" + body.replace(_EXPORT, "vega.expressionInterpreter = expression;") + "\n})();"


@cache
def scripts() -> tuple[str, ...]:
    """The three libraries as inline scripts, in load order (no source-map comments: nothing to fetch)."""
    texts = [(VENDOR / name).read_text(encoding="utf-8") for name in FILES]
    texts[2] = _interpreter_script(texts[2])
    return tuple(_MAP.sub("", text).replace("</script", "<\\/script") for text in texts)
