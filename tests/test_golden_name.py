"""The golden set's default name (SPEC §1.1; issue 31, item 10): the file's path from its git
repository's root, else from the working folder, the same however the path is typed and
wherever the command runs; a run whose default differs from the name its golden content
was stored under says so, with `--golden-name OLD`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate.cli import main
from termgate.io import default_golden_name

from conftest import golden_row, write_jsonl

CI_VARIABLES = ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE", "CI_PROJECT_DIR")


@pytest.fixture
def repo(tmp_path) -> Path:
    """A checkout (a `.git` folder, no git needed) with golden/g.jsonl and a subfolder."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "golden").mkdir()
    (root / "sub" / "deeper").mkdir(parents=True)
    write_jsonl(root / "golden" / "g.jsonl", [golden_row("q1", "sofa", ["couch", "settee"]),
                                              golden_row("q2", "lamp", ["light"], critical=True)])
    write_jsonl(root / "gen.jsonl", [{"query_id": "q1", "terms": ["couch"]}, {"query_id": "q2", "terms": ["bulb"]}])
    (tmp_path / "elsewhere").mkdir()
    return root


@pytest.mark.parametrize("cwd, typed", [
    ("repo", "golden/g.jsonl"),
    ("repo", "./golden//x/../g.jsonl"),
    ("repo/sub/deeper", "../../golden/g.jsonl"),
    ("repo/sub", "{root}/golden/g.jsonl"),      # absolute, from a subfolder
    ("elsewhere", "{root}/golden/g.jsonl"),     # absolute, from outside the checkout
    ("elsewhere", "../repo/golden/g.jsonl"),    # relative, from outside the checkout
])
def test_the_default_name_is_the_path_from_the_repository_root(repo, cwd, typed):
    path = typed.format(root=repo)
    assert default_golden_name(path, cwd=repo.parent / cwd) == "golden/g.jsonl"


def test_a_git_file_marks_a_checkout_too(tmp_path):
    """A worktree or a submodule has a `.git` file, not a folder."""
    (tmp_path / "wt" / "data").mkdir(parents=True)
    (tmp_path / "wt" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert default_golden_name(tmp_path / "wt" / "data" / "g.jsonl", cwd=tmp_path) == "data/g.jsonl"


def test_outside_a_repository_the_name_is_from_the_working_folder_else_as_given(tmp_path):
    (tmp_path / "work" / "data").mkdir(parents=True)
    work = tmp_path / "work"
    assert default_golden_name(work / "data" / "g.jsonl", cwd=work) == "data/g.jsonl"
    assert default_golden_name("data/./g.jsonl", cwd=work) == "data/g.jsonl"
    outside = tmp_path / "other" / "g.jsonl"  # neither in a checkout nor in the working folder: as given, tidied
    assert default_golden_name(str(outside), cwd=work) == outside.as_posix()
    assert default_golden_name("../other//g.jsonl", cwd=work) == "../other/g.jsonl"


def evaluate(golden, *args):
    return CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--drift-judge", "none", *map(str, args)])


@pytest.mark.slow
def test_one_file_has_one_name_from_a_subfolder_and_from_elsewhere(repo, monkeypatch):
    """An absolute --golden path gives the report, the PR-comment marker and GitLab's Code
    Quality report (its path and fingerprints) the same golden name from anywhere."""
    for var in CI_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    seen = []
    for cwd in (repo / "sub", repo.parent / "elsewhere"):
        monkeypatch.chdir(cwd)
        result = evaluate(repo / "golden" / "g.jsonl", "--generated", repo / "gen.jsonl", "--no-store",
                          "--json", "r.json", "--codequality", "cq.json", "--pr-comment", "c.md")
        assert result.exit_code == 1, result.output  # the critical query fails
        assert "note:" not in result.stderr
        report = json.loads(Path("r.json").read_text())
        quality = json.loads(Path("cq.json").read_text())
        marker = Path("c.md").read_text(encoding="utf-8").splitlines()[0]
        seen.append((report["run"]["golden_name"], marker, [(i["location"]["path"], i["fingerprint"]) for i in quality]))
    assert seen[0][0] == "golden/g.jsonl" and seen[0][1] == "<!-- termgate: golden/g.jsonl/ -->"
    assert {path for path, _ in seen[0][2]} == {"golden/g.jsonl"} and seen[0][2]
    assert seen[1] == seen[0]


@pytest.mark.slow
def test_a_new_default_name_for_stored_golden_content_says_how_to_keep_the_old_one(repo, monkeypatch, backend):
    monkeypatch.chdir(repo / "sub")
    golden, common = repo / "golden" / "g.jsonl", ("--generated", repo / "gen.jsonl", "--db", backend)
    assert evaluate(golden, *common, "--golden-name", "old/name.jsonl").exit_code == 1
    renamed = evaluate(golden, *common, "--json", "r.json")
    assert renamed.exit_code == 1, renamed.output
    note = [line for line in renamed.stderr.splitlines() if line.startswith("note: golden set")]
    assert note == ["note: golden set 'golden/g.jsonl': earlier runs stored this golden content as "
                    "'old/name.jsonl'; the default name is now the path from the git repository's root, else from the "
                    "working folder (SPEC §1.1), and "
                    "approvals, trends, the noise floor and the PR comment go by name: pass --golden-name "
                    "old/name.jsonl to keep the old one"]
    recommendations = json.loads(Path("r.json").read_text())["recommendations"]
    assert recommendations[-1] == note[0].removeprefix("note: ")
    assert not any("no action needed" in line for line in recommendations)  # the note asks for one
    kept = evaluate(golden, *common, "--golden-name", "old/name.jsonl")
    assert kept.exit_code == 1 and "note: golden set" not in kept.stderr
    again = evaluate(golden, *common)  # runs under the new default exist now: nothing to say
    assert again.exit_code == 1 and "note: golden set" not in again.stderr


def test_the_rename_note_is_not_preceded_by_no_action_needed(repo, monkeypatch, tmp_path):
    # a run that passes every check, but whose golden content was stored under another name:
    # the note asks the user to act, so "no action needed" must not stand before it
    monkeypatch.chdir(repo)
    write_jsonl(repo / "pass.jsonl", [{"query_id": "q1", "terms": ["couch", "settee"]},
                                      {"query_id": "q2", "terms": ["light"]}])
    golden, common = repo / "golden" / "g.jsonl", ("--generated", repo / "pass.jsonl", "--db", tmp_path / "s.duckdb")
    assert evaluate(golden, *common, "--golden-name", "old/name.jsonl").exit_code == 0
    renamed = evaluate(golden, *common, "--json", "r.json")
    assert renamed.exit_code == 0, renamed.output
    recommendations = json.loads(Path("r.json").read_text())["recommendations"]
    assert recommendations[-1].startswith("golden set 'golden/g.jsonl': earlier runs stored this golden content")
    assert not any("no action needed" in line for line in recommendations), recommendations
