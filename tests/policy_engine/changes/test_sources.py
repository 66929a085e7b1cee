"""BASE and HEAD from files, from git (``REF:PATH``) and ``/dev/null``; a mistyped path is an error."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from policy_engine.changes.sources import NULL, load_side
from policy_engine.inputs.loading import LoadError

EXAMPLE = Path(__file__).resolve().parents[3] / "topologies" / "example.yaml"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo, check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository with topologies/prod.yaml on main, then a second commit that lowers QS2's limit."""
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "topologies").mkdir()
    text = EXAMPLE.read_text(encoding="utf-8")
    (tmp_path / "topologies" / "prod.yaml").write_text(text, encoding="utf-8")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    (tmp_path / "topologies" / "prod.yaml").write_text(text.replace("capacity: {ml.g5.xlarge: 3}",
                                                                    "capacity: {ml.g5.xlarge: 4}"), encoding="utf-8")
    _git(tmp_path, "commit", "-q", "-am", "head")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_ref_path_reads_the_committed_version(repo):
    side = load_side("main~1:topologies/prod.yaml")
    assert side.label == "main~1:topologies/prod.yaml"
    assert side.topology.service_environments[0].capacity == {"ml.g5.xlarge": 3}
    assert load_side("main:topologies/prod.yaml").topology.service_environments[0].capacity == {"ml.g5.xlarge": 4}


def test_an_existing_file_wins_over_git(repo):
    (repo / "main:topologies").mkdir()
    (repo / "main:topologies" / "prod.yaml").write_text((repo / "topologies" / "prod.yaml").read_text())
    assert load_side("main:topologies/prod.yaml").label == "main:topologies/prod.yaml"


def test_dev_null_is_an_empty_topology(repo):
    side = load_side(NULL)
    assert side.absent and side.topology.job_queues == ()


def test_mistyped_paths_are_errors_never_deleted(repo):
    with pytest.raises(LoadError, match=r"commit main has no file topologies/prdo\.yaml"):
        load_side("main:topologies/prdo.yaml")
    with pytest.raises(LoadError, match="no such file and 'nobranch' is not a git commit"):
        load_side("nobranch:topologies/prod.yaml")
    with pytest.raises(LoadError, match="no such file"):
        load_side("topologies/prdo.yaml")


def test_load_problems_name_ref_path(repo):
    (repo / "topologies" / "prod.yaml").write_text("job_queues: [{name: q, service_environment: nowhere}]\n")
    _git(repo, "commit", "-q", "-am", "broken")
    with pytest.raises(LoadError) as error:
        load_side("main:topologies/prod.yaml")
    assert all(problem.startswith("main:topologies/prod.yaml") for problem in error.value.problems)
    assert "batch-quota-diff-" not in "\n".join(error.value.problems)


def test_symbolic_links_in_the_commit_are_followed_and_paths_are_from_the_root(repo, monkeypatch):
    (repo / "topologies" / "link.yaml").symlink_to("prod.yaml")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "link")
    monkeypatch.chdir(repo / "topologies")
    assert load_side("main:topologies/link.yaml").topology.service_environments[0].capacity == {"ml.g5.xlarge": 4}
    with pytest.raises(LoadError, match="is not a file in commit main"):
        load_side("main:topologies")


def test_a_python_topology_from_another_revision_needs_allow_python(repo):
    """``diff REF:PATH`` of a ``.py`` runs code nobody here has run (a pull request's): refused unless asked."""
    from click.testing import CliRunner

    from policy_engine.cli import main

    marker = repo / "ran.txt"
    (repo / "topologies" / "code.py").write_text(
        "from pathlib import Path\nfrom policy_engine.inputs.examples import example_topology\n"
        f"Path({str(marker)!r}).write_text('ran')\nTOPOLOGY = example_topology()\n", encoding="utf-8")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "python")
    with pytest.raises(LoadError, match="pass --allow-python"):
        load_side("main:topologies/code.py")
    result = CliRunner().invoke(main, ["diff", "main:topologies/code.py", "topologies/prod.yaml"])
    assert result.exit_code == 2 and "--allow-python" in result.stderr and not marker.exists()
    result = CliRunner().invoke(main, ["diff", "main:topologies/code.py", "topologies/prod.yaml", "--allow-python"])
    assert result.exit_code in (0, 1) and marker.read_text() == "ran"
