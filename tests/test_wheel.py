"""Issue 29: the built wheel installs into a fresh virtual environment and works outside the
checkout: `termgate demo`, `evaluate`, `doctor`, `drift install` and `dashboard`, from the
installed package alone (pip fetches the dependencies; its cache makes a rerun quick)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.install


def run(*args, cwd, env=None, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the wheel, a fresh venv's bin folder, an environment that knows nothing of the checkout)."""
    base = tmp_path_factory.mktemp("wheel")
    # a copy of the sources: setuptools builds in the tree, and a build/ folder left from an
    # earlier build would put files into the wheel that the checkout no longer has
    source = base / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", "*.duckdb", "*.duckdb.wal", ".hypothesis"))
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q", "-w",
                base / "dist", source, cwd=base)
    assert built.returncode == 0, built.stderr
    wheel = next((base / "dist").glob("termgate-*.whl"))
    made = run(sys.executable, "-m", "venv", base / "venv", cwd=base)
    assert made.returncode == 0, made.stderr
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith(("TERMGATE_", "EVALCORE_"))}
    env["PATH"] = f"{base / 'venv' / 'bin'}:{env.get('PATH', '')}"
    env["XDG_CACHE_HOME"] = str(base / "cache")  # the demo's search indexes: a user's cache, not the developer's
    pip = run(base / "venv/bin/pip", "install", "--disable-pip-version-check", "-q", wheel, cwd=base, env=env)
    assert pip.returncode == 0, pip.stderr
    return wheel, base / "venv" / "bin", env


def test_the_wheel_carries_schemas_drift_model_demo_data_and_dashboard(installed):
    wheel, _, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("termgate/schema/report.schema.json", "termgate/drift/drift_model.json",
                   "termgate/demo_data/medical/golden.jsonl", "termgate/demo_data/prompts/v2.json",
                   "termgate/demo_data/medical/corpus.jsonl", "termgate/demo_data/medical/qrels.txt",
                   "termgate/dashboard/streamlit_app/app.py", "termgate/dashboard/streamlit_app/views/signoff.py"):
        assert needed in names, needed
    assert not [n for n in names if n.split("/")[0] not in ("termgate",) and ".dist-info/" not in n]
    assert not [n for n in names if n.startswith(("tests/", "evalcore"))]


def test_demo_evaluate_and_doctor_run_outside_the_checkout(installed, tmp_path):
    _, bin_, env = installed
    termgate = bin_ / "termgate"
    version = run(termgate, "--version", cwd=tmp_path, env=env)
    assert version.returncode == 0 and version.stdout.startswith("termgate, version ")
    where = run(bin_ / "python", "-c", "import termgate, sys; print(termgate.__file__)", cwd=tmp_path, env=env)
    assert str(bin_.parent) in where.stdout and str(ROOT) not in where.stdout  # the installed copy, not ours

    demo = run(termgate, "demo", "--db", "store.duckdb", cwd=tmp_path, env=env)
    assert demo.returncode == 0, demo.stderr
    assert demo.stdout.count("(stored)") == 12 and "medical" in demo.stdout  # 9 runs, 3 prompt evaluations
    again = run(termgate, "demo", "--db", "store.duckdb", cwd=tmp_path, env=env)
    assert again.stdout.count("(already stored)") == 12

    # the demo files the package carries, scored by the installed CLI
    data = Path(run(bin_ / "python", "-c", "from termgate.demo import DEMO_DATA; print(DEMO_DATA)", cwd=tmp_path,
                    env=env).stdout.strip())
    assert bin_.parent in data.parents
    evaluate = run(termgate, "evaluate", "--golden", data / "ecommerce/golden.jsonl", "--generated",
                   data / "ecommerce/v2-candidate.jsonl", "--db", "store.duckdb", "--json", "report.json",
                   "--drift-judge", "none", cwd=tmp_path, env=env)
    assert evaluate.returncode == 1, evaluate.stdout + evaluate.stderr  # v2 regresses: not releasable
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["gate"]["decision"] == "fail" and report["run"]["termgate_version"] == report["run"][
        "evalcore_version"]

    # no model in a fresh environment: doctor says so, and how to get it, and evaluate's default is none
    doctor = run(termgate, "doctor", cwd=tmp_path, env=env)
    assert doctor.returncode == 1, doctor.stdout
    assert "MISSING   drift model" in doctor.stdout and "termgate drift install" in doctor.stdout
    assert "drift judge by default: none" in doctor.stdout
    fallback = run(termgate, "evaluate", "--golden", data / "medical/golden.jsonl", "--generated",
                   data / "medical/v3-candidate.jsonl", "--no-store", "-q", cwd=tmp_path, env=env)
    assert "note: drift judge none" in fallback.stderr and "termgate drift install" in fallback.stderr


def test_drift_install_is_the_one_step_to_the_embedding_judge(installed, tmp_path):
    _, bin_, env = installed
    if not Path("/usr/share/wordnet/index.noun").exists():
        pytest.skip("WordNet is not installed (apt-get install wordnet-base; .ci/run installs it)")
    termgate = bin_ / "termgate"
    step = run(termgate, "drift", "install", cwd=tmp_path, env=env)
    assert step.returncode == 0, step.stdout + step.stderr
    doctor = run(termgate, "doctor", cwd=tmp_path, env=env)
    assert doctor.returncode == 0 and "drift judge by default: embedding" in doctor.stdout, doctor.stdout
    data = bin_.parent / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" / \
        "termgate" / "demo_data" / "medical"
    evaluate = run(termgate, "evaluate", "--golden", data / "golden.jsonl", "--generated", data / "v2-candidate.jsonl",
                   "--no-store", "--json", "-", cwd=tmp_path, env=env)
    report = json.loads(evaluate.stdout)
    assert report["run"]["drift_judge"] == "embedding", evaluate.stderr
    assert "note: drift judge" not in evaluate.stderr


def test_the_dashboard_command_serves_the_installed_app(installed, tmp_path):
    from dashboard_server import Dashboard

    _, bin_, env = installed
    assert run(bin_ / "termgate", "demo", "--db", "store.duckdb", cwd=tmp_path, env=env).returncode == 0
    server = Dashboard(tmp_path / "store.duckdb", tmp_path, env=env, termgate=(str(bin_ / "termgate"),)).start()
    try:
        page = urllib.request.urlopen(server.url, timeout=10).read().decode()
        assert "<div id=\"root\">" in page
        assert server.proc.poll() is None
    finally:
        server.stop()
    assert "Traceback" not in server.log_path.read_text(encoding="utf-8")


def test_import_termgate_is_light_and_its_api_loads_on_first_use(tmp_path):
    """PEP 562: the top level names the API without importing it, so `termgate --version`
    and `import termgate` do not pay for DuckDB, pandas or the scorer."""
    probe = ("import sys, termgate\n"
             "heavy = [m for m in ('duckdb', 'pandas', 'pyarrow', 'termgate.evaluation') if m in sys.modules]\n"
             "assert not heavy, heavy\n"
             "assert callable(termgate.evaluate) and 'termgate.evaluation' in sys.modules\n"
             "assert termgate.PromptEvaluator.__name__ == 'PromptEvaluator'\n"
             "assert set(termgate.__all__) <= set(dir(termgate))\n"
             "try:\n    termgate.nothing_here\nexcept AttributeError as exc:\n    print('refused', exc)\n")
    done = run(sys.executable, "-c", probe, cwd=tmp_path)
    assert done.returncode == 0 and "refused" in done.stdout, done.stderr
    version = run(sys.executable, "-X", "importtime", "-m", "termgate", "--version", cwd=tmp_path)
    loaded = {line.rsplit("|", 1)[-1].strip() for line in version.stderr.splitlines() if "|" in line}
    assert version.returncode == 0 and not loaded & {"duckdb", "pandas", "pyarrow", "termgate.evaluation"}


def test_pipx_installs_the_wheel_and_drift_install_reaches_its_environment(installed, tmp_path):
    pipx = Path(sys.executable).with_name("pipx")
    if not pipx.exists():
        pytest.skip("pipx is not installed (a dev extra: pip install -e '.[dev]')")
    wheel, _, env = installed
    env = {**env, "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin"),
           "PIPX_MAN_DIR": str(tmp_path / "man")}
    done = run(pipx, "install", wheel, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    termgate = tmp_path / "bin" / "termgate"
    assert run(termgate, "--version", cwd=tmp_path, env=env).stdout.startswith("termgate, version ")
    demo = run(termgate, "demo", "--db", "store.duckdb", cwd=tmp_path, env=env)
    assert demo.returncode == 0 and demo.stdout.count("(stored)") == 12, demo.stderr
    step = run(termgate, "drift", "install", cwd=tmp_path, env=env)
    assert step.returncode in (0, 1), step.stdout + step.stderr  # 1: WordNet missing, said so
    doctor = run(termgate, "doctor", cwd=tmp_path, env=env)
    assert "ok        drift model" in doctor.stdout and str(tmp_path / "pipx") in doctor.stdout
