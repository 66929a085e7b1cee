"""docs/rules.md is generated from the rules; it must match what the code says."""

from __future__ import annotations

import inspect
import io
import re
import tokenize
from pathlib import Path

from policy_engine.analysis.rules import REGISTRY, all_rules
from policy_engine.analysis.rules.catalogue import render_catalogue
from policy_engine.foundation import limits

DOCS = Path(__file__).resolve().parents[4] / "docs" / "rules.md"


def test_committed_catalogue_is_up_to_date():
    assert DOCS.read_text(encoding="utf-8") == render_catalogue(), (
        "docs/rules.md is stale: run `python -m policy_engine.analysis.rules.catalogue > docs/rules.md`"
    )


def test_every_rule_is_in_the_catalogue():
    text = render_catalogue()
    for rule in all_rules():
        suppressible = "yes" if rule.can_suppress(rule.severity) and not rule.after_findings else "no"
        assert f"| [{rule.id}](#{rule.id.lower()}) | {rule.severity.value} | {suppressible} | {rule.title} |" in text
        assert f"\n### {rule.id}\n" in text


def test_the_catalogue_says_which_findings_can_be_suppressed():
    text = render_catalogue()
    assert "| [BQ402](#bq402) | error | yes |" in text  # a refuted guarantee: AWS still deploys
    assert "| [BQ116](#bq116) | error | no |" in text  # an AWS limit: the deploy would fail
    assert "| [BQ302](#bq302) | warning | yes |" in text and "| [BQ003](#bq003) | warning | no |" in text


def test_rule_ids_are_stable_shapes():
    for rule in all_rules():
        assert len(rule.id) == 5 and rule.id.startswith("BQ") and rule.id[2:].isdigit()
        assert rule.title and "\n" not in rule.title


def test_aws_rule_docstrings_take_their_figures_from_limits():
    """A limit AWS changes is one edit in ``limits.py``: no rule AWS enforces writes a figure of its own."""
    for rule in all_rules():
        if rule.enforced_by_aws:
            raw = inspect.getdoc(rule.function) or ""
            figures = set(re.findall(r"(?<![{.\w])\d{2,}\b", raw)) - {"32", "64"}  # bit widths, not limits
            assert not figures, (f"{rule.id} writes {sorted(figures)}; "
                                 "use {LIMIT.maximum} from policy_engine.foundation.limits")


def test_figures_in_descriptions_are_filled_in():
    described = {rule.id: rule.description for rule in all_rules()}
    assert "at most 20 quota shares" in described["BQ106"] and "{" not in "".join(described.values())


#: Figures of ``limits.py`` that also occur in the endpoint and the constructs for reasons of their own:
#: ``(file, figure as written) -> why it is not an AWS figure written out by hand``.
NOT_AWS_FIGURES = {
    ("policy_engine/adapters/endpoint/app.py", "1000"): "FREEZE_EVERY, the endpoint's garbage-collector tuning",
    ("policy_engine/adapters/endpoint/app.py", "200"): "HTTP status 200",
    ("policy_engine/adapters/endpoint/app.py", "500"): "HTTP status 500",
    ("policy_engine/adapters/endpoint/base/errors.py", "500"): "HTTP status 500",
    ("policy_engine/adapters/endpoint/handlers/service_jobs.py", "200"): "HTTP status 200",
    ("policy_engine/adapters/endpoint/handlers/service_jobs.py", "1000"): "milliseconds per second",
    ("policy_engine/adapters/endpoint/service.py", "1000"): "milliseconds per second",
    ("quota_constructs/topology_stack.py", "1,000"): "the synth benchmark's topology size",
    ("quota_constructs/validation.py", "1,000"): "the synth benchmark's topology size",
    ("policy_engine/adapters/endpoint/cloudtrail.py", "1000"): "milliseconds per second",
    ("policy_engine/adapters/endpoint/base/sagemaker.py", "1000"): "milliseconds per second",
    ("policy_engine/adapters/endpoint/control.py", "1000"): "milliseconds per second",
    ("policy_engine/adapters/endpoint/base/scheduler.py", "1000"): "milliseconds per second",
    ("quota_constructs/__init__.py", "20"): "Node.js major versions (SUPPORTED_NODE_MAJORS)",
    ("quota_constructs/monitoring.py", "5"): "the alarm's 5-minute period, a project default",
    ("policy_engine/adapters/endpoint/guard.py", "256"): "the Host check's cache size, the endpoint's tuning",
    ("quota_constructs/monitoring.py", "200"): "the log group name's length budget, a project choice",
    ("quota_constructs/monitoring.py", "50"): "the function's timeout in seconds, a project choice",
    ("quota_constructs/monitoring.py", "256"): "the function's memory in MB, a project choice",
    ("quota_constructs/monitoring_function/index.py", "1000"): "milliseconds per second, and PutMetricData's batch "
    "(the Lambda ships alone with boto3: it cannot import limits.py)",
    ("quota_constructs/monitoring_function/index.py", "1,000"): "PutMetricData's batch, in the Lambda's own docs "
    "(it cannot import limits.py)",
    ("quota_constructs/monitoring_function/index.py", "100"): "a list page, in the Lambda that cannot import "
    "limits.py",
}
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.\[{-])(\d{1,3}(?:,\d{3})+|\d+)(?![\w.%]|\.\d)")


def _written_figures(path: Path, figures: set[int], words: set[str]) -> list[tuple[int, str]]:
    """Every figure of ``figures`` (and text of ``words``) written in ``path``: literals, strings, docstrings and
    comments."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type == tokenize.NUMBER:
            try:
                if int(token.string.replace("_", ""), 0) in figures:
                    found.append((token.start[0], token.string))
            except ValueError:  # a float
                continue
        elif token.type in (tokenize.STRING, tokenize.COMMENT, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)):
            found += [(token.start[0], m.group(1)) for m in _NUMBER_IN_TEXT.finditer(token.string)
                      if int(m.group(1).replace(",", "")) in figures]
            found += [(token.start[0], word) for word in words if word in token.string]
    return found


def _aws_figures() -> tuple[set[int], set[str]]:
    figures = {value for limit in limits.ALL.values() for value in (limit.minimum, limit.maximum)
               if value is not None and abs(value) >= 2}  # 0, 1 and -1 are everywhere
    return figures, set(limits.TIME_LIMIT_REASONS)


def test_endpoint_and_constructs_take_their_figures_from_limits():
    """An AWS figure (a bound, a name length, a time-limit reason) is written once, in ``limits.py``: the endpoint
    and the constructs, messages and docstrings included, read it from there."""
    figures, words = _aws_figures()
    root = DOCS.parents[1]
    written = []
    for package in ("policy_engine/adapters/endpoint", "quota_constructs"):
        for path in sorted((root / package).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            written += [f"{name}:{line}: {figure}" for line, figure in _written_figures(path, figures, words)
                        if (name, figure) not in NOT_AWS_FIGURES]
    assert written == [], "write these as limits.X (or say in NOT_AWS_FIGURES why they are not AWS's)"


def test_the_figure_scan_sees_literals_messages_and_docstrings(tmp_path):
    figures, words = _aws_figures()
    module = tmp_path / "m.py"
    module.write_text('"""At most 20 shares."""\nPAGE = 100\nNAME = r"[a-z]{1,128}"\n'
                      'MESSAGE = f"at most {n} of 1,000"\nREASON = "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"\n'
                      'TIME = 3.5  # fine: 3\n')
    assert _written_figures(module, figures, words) == [
        (1, "20"), (2, "100"), (3, "128"), (4, "1,000"), (5, "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED")]


def test_every_rule_links_the_aws_page_or_its_own_catalogue_entry():
    """AWS's limits and API rules cite the AWS page that states them; the project's own rules their entry here."""
    for each in all_rules():
        if each.id.startswith("BQ1"):
            assert each.source_url.startswith("https://docs.aws.amazon.com/"), each.id
            assert f"AWS documentation: <{each.source_url}>" in render_catalogue()
        elif each.family == "Training plans" and each.source_url.startswith("https://docs.aws.amazon.com/"):
            # SageMaker's own rules on a plan (checked here, since a plan is bought, never deployed) cite its page
            assert f"AWS documentation: <{each.source_url}>" in render_catalogue()
        else:
            assert each.source_url == f"docs/rules.md#{each.id.lower()}", each.id
    assert REGISTRY["BQ106"].source_url.endswith("/batch/latest/userguide/quota-shares.html")
    assert REGISTRY["BQ113"].source_url.endswith("/APIReference/API_JobStateTimeLimitAction.html")


def test_the_catalogue_links_the_aws_pages_and_its_anchors_resolve():
    """Read through a CommonMark renderer: every AWS link is a link, every project rule's help link finds its entry."""
    from tests import gfm

    page = gfm.html(render_catalogue())
    for each in all_rules():
        if each.source_url.startswith("https://"):
            assert f'href="{each.source_url}"' in page, each.id
        assert f'href="#{each.id.lower()}"' in page and f"<h3>{each.id}</h3>" in page
