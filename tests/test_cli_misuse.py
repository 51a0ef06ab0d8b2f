"""What a newcomer types wrong at `termgate dashboard` and `termgate drift install`: one line
and a refusal, never a server on the wrong store or pip's screenful."""

from __future__ import annotations

import os
import sys
import sysconfig

import pytest
from click.testing import CliRunner

from termgate.cli import main


@pytest.fixture
def no_exec(monkeypatch):
    started = []
    monkeypatch.setattr(os, "execve", lambda *args: started.append(args))
    return started


@pytest.mark.parametrize("args", [["data/x.duckdb"], ["--port", "8600", "x.duckdb"], ["--", "app.py"],
                                  ["--", "--server.fileWatcherType"]])
def test_the_dashboard_refuses_what_streamlit_would_hand_to_the_app(args, no_exec):
    result = CliRunner().invoke(main, ["dashboard", *args])
    assert result.exit_code == 2 and not no_exec
    assert "--db" in result.output or "needs a value" in result.output


def test_the_dashboard_passes_streamlit_flags_through(no_exec, tmp_path):
    result = CliRunner().invoke(main, ["dashboard", "--db", str(tmp_path / "s.duckdb"), "--",
                                       "--server.fileWatcherType", "poll", "--server.maxUploadSize=5"])
    assert result.exit_code == 0, result.output
    (argv, env), = [(call[1], call[2]) for call in no_exec]
    assert argv[-3:] == ["--server.fileWatcherType", "poll", "--server.maxUploadSize=5"]
    assert env["TERMGATE_DB"] == str(tmp_path / "s.duckdb")


def test_drift_install_names_a_system_managed_python_before_pip_runs(monkeypatch, tmp_path):
    (tmp_path / "EXTERNALLY-MANAGED").write_text("[externally-managed]\n")
    monkeypatch.setattr(sys, "base_prefix", sys.prefix)
    real = sysconfig.get_path
    monkeypatch.setattr(sysconfig, "get_path", lambda name, *a, **k: str(tmp_path) if name == "stdlib" else real(name, *a, **k))
    ran = []
    monkeypatch.setattr("subprocess.run", lambda *a, **k: ran.append(a))
    result = CliRunner().invoke(main, ["drift", "install"])
    assert result.exit_code == 1 and not ran
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "PEP 668" in lines[0] and "pipx" in lines[0]


def test_drift_install_names_an_environment_it_cannot_write(monkeypatch):
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    ran = []
    monkeypatch.setattr("subprocess.run", lambda *a, **k: ran.append(a))
    result = CliRunner().invoke(main, ["drift", "install"])
    assert result.exit_code == 1 and not ran
    assert "cannot write to" in result.output and "virtual environment" in result.output
