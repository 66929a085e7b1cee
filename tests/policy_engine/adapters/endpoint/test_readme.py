"""The README's notebook steps run against a served walkthrough and print what the README shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).parents[4] / "README.md"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def test_the_readme_notebook_steps_print_what_the_readme_shows(walkthrough_endpoint, monkeypatch):
    text = README.read_text(encoding="utf-8")
    section = text.split("<!-- serve-notebook:begin -->", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    shown = section.split("<!-- serve-notebook:end -->", 1)[1].split("```console\n", 1)[1].split("```", 1)[0]
    for name, value in (("AWS_ENDPOINT_URL_BATCH", walkthrough_endpoint.url), ("AWS_ACCESS_KEY_ID", "x"),
                        ("AWS_SECRET_ACCESS_KEY", "x"), ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(name, value)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {"__name__": "notebook_steps"})
    assert UUID.sub("ID", printed.getvalue()) == UUID.sub("ID", shown)
