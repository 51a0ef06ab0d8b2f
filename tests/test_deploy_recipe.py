"""docs/deploy.md's PostgreSQL recipe, followed as written (issue 31, item 8).

The fenced `sh` blocks of "Create the database and its owner" and "Roles: least privilege"
run top to bottom in one bash, in a terminal, against a fresh PostgreSQL 15 server whose TCP
connections need passwords (scram-sha-256); the test types each password at its prompt.
What stands in for the reader's machine, and nothing else: `sudo -u postgres CMD` runs CMD
as the server's superuser over its socket, `sudo apt-get install` does nothing (the server
is installed), and the host `db.internal` is the test server's 127.0.0.1:PORT. The doc and
the test cannot drift apart: the test reads the doc.
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate.cli import main

from conftest import NO_POSTGRES, golden_row, write_jsonl
from pg_server import PostgresServer, binaries

pytestmark = [pytest.mark.skipif(binaries() is None, reason=NO_POSTGRES), pytest.mark.postgres, pytest.mark.slow]

DEPLOY = Path(__file__).resolve().parents[1] / "docs" / "deploy.md"
RECIPE_SECTIONS = ("## Create the database and its owner", "## Roles: least privilege")
PASSWORDS = {"termgate_owner": "owner-pw-31", "evalcore_ci": "ci-pw-31", "evalcore_dashboard": "dash-pw-31"}
NEW_ROLES = ["termgate_owner", "evalcore_ci", "evalcore_dashboard"]  # createuser --pwprompt, in the doc's order


def section(text: str, heading: str) -> str:
    start = text.index(heading + "\n")
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]


def fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", text, flags=re.S | re.M)


def recipe() -> str:
    text = DEPLOY.read_text(encoding="utf-8")
    return "\n".join(block for heading in RECIPE_SECTIONS for block in fenced(section(text, heading), "sh"))


def stand_ins(server: PostgresServer) -> str:
    """Shell functions for what the test cannot do as the reader does (see the docstring)."""
    superuser = f"env -u PGPASSWORD -u TERMGATE_DB PGHOST={server.folder} PGPORT={server.port} PGUSER=postgres"
    return f"""set -euo pipefail
termgate() {{ {shlex.quote(sys.executable)} -m termgate "$@"; }}
sudo() {{
  case "$1 $2" in
    "apt-get install") return 0 ;;
    "-u postgres") shift 2; {superuser} "$@" ;;
    *) echo "the recipe runs sudo $*, which this test does not stand in for" >&2; return 99 ;;
  esac
}}
"""


def echo_off(leader: int, seconds: float = 10) -> None:
    """Wait until the program at the prompt has turned the terminal's echo off, as a person
    sees nothing echoed when typing a password."""
    deadline = time.monotonic() + seconds
    while termios.tcgetattr(leader)[3] & termios.ECHO and time.monotonic() < deadline:
        time.sleep(0.01)


def run_in_terminal(script: str, env: dict, cwd: Path, timeout: float = 300) -> tuple[int, str]:
    """Run `script` in bash on a pseudo-terminal, typing the password each prompt asks for:
    a new role's (createuser --pwprompt, in NEW_ROLES order), `NAME password:` (read -p), and
    the same again for "Enter it again"."""
    leader, follower = os.openpty()
    process = subprocess.Popen(["bash", "-c", script], stdin=follower, stdout=follower, stderr=follower, env=env,
                               cwd=cwd, start_new_session=True)
    os.close(follower)
    output, seen, new_roles, last = "", 0, list(NEW_ROLES), None
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([leader], [], [], 0.2)[0]:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: every process on it has exited
                break
            output += chunk.decode("utf-8", "replace")
            prompt = re.search(r"(Enter password for new role|Enter it again|(\w+) password): *$", output[seen:])
            if prompt:
                answer = (PASSWORDS[new_roles.pop(0)] if prompt.group(1).startswith("Enter password")
                          else last if prompt.group(1) == "Enter it again" else PASSWORDS[prompt.group(2)])
                echo_off(leader)
                os.write(leader, (answer + "\n").encode())
                seen, last = len(output), answer
        else:
            process.kill()
        return process.wait(timeout=10), output
    finally:
        os.close(leader)


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """A fresh server with the recipe run on it: (server, the doc's host replaced)."""
    server = PostgresServer().start(host_auth="scram-sha-256")
    try:
        host = f"127.0.0.1:{server.port}"
        env = {key: value for key, value in os.environ.items() if not key.startswith(("PG", "TERMGATE_"))}
        folder = tmp_path_factory.mktemp("deploy")
        env.update(PATH=f"{server.bin}{os.pathsep}{env['PATH']}", PSQLRC=os.devnull,
                   PGPASSFILE=str(folder / "no-pgpass"), HOME=str(folder), LC_ALL="C.UTF-8")
        script = stand_ins(server) + recipe().replace("db.internal", host)
        code, output = run_in_terminal(script, env, folder)
        assert code == 0, output
        for password in PASSWORDS.values():
            assert password not in output  # typed with echo off
        yield server, host
    finally:
        server.stop()


def doc_url(role: str, host: str) -> str:
    """The URL docs/deploy.md gives `role` in "Run the dashboard and CI against it"."""
    text = section(DEPLOY.read_text(encoding="utf-8"), "## Run the dashboard and CI against it")
    urls = set(re.findall(rf"postgresql://{role}@db\.internal/termgate", text))
    assert len(urls) == 1, f"deploy.md names no URL for {role}"
    return urls.pop().replace("db.internal", host)


def termgate(*args, url: str, role: str, password: str | None = None):
    env = {"TERMGATE_DB": url, "PGPASSWORD": password or PASSWORDS[role], "PGPASSFILE": os.devnull,
           "TERMGATE_PASSWORD": "pw-mallory-123"}
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def test_the_recipe_has_the_steps_this_test_follows():
    script = recipe()
    assert "createuser --pwprompt termgate_owner" in script
    assert "termgate store init" in script and "termgate store roles --grants" in script
    assert script.count("createuser --pwprompt") == len(NEW_ROLES)


def test_the_ci_role_stores_a_run_and_the_dashboard_role_reads_it(deployed, tmp_path):
    import psycopg

    server, host = deployed
    ci, dashboard = doc_url("evalcore_ci", host), doc_url("evalcore_dashboard", host)
    golden = write_jsonl(tmp_path / "golden.jsonl", [golden_row("q1", "shoes", ["sneakers", "trainers"])])
    generated = write_jsonl(tmp_path / "gen.jsonl", [{"query_id": "q1", "terms": ["sneakers", "trainers"]}])
    evaluate = ["evaluate", "--golden", golden, "--generated", generated, "--drift-judge", "none",
                "--author", "ci-bot", "--json", tmp_path / "r.json"]
    stored = termgate(*evaluate, url=ci, role="evalcore_ci")
    assert stored.exit_code == 0, stored.output
    run_id = json.loads((tmp_path / "r.json").read_text())["evaluation_id"]

    wrong = termgate("runs", url=ci, role="evalcore_ci", password=PASSWORDS["evalcore_dashboard"])
    assert wrong.exit_code == 2 and "password authentication failed" in wrong.stderr  # each role its own password

    runs = termgate("runs", url=dashboard, role="evalcore_dashboard")
    assert runs.exit_code == 0 and run_id in runs.output, runs.output
    assert termgate("audit", "verify", url=dashboard, role="evalcore_dashboard").exit_code == 0
    as_dashboard = termgate(*evaluate, url=dashboard, role="evalcore_dashboard")
    assert as_dashboard.exit_code == 2 and "this database role may not" in as_dashboard.stderr, as_dashboard.output
    accounts = termgate("users", "add", "mallory", "--role", "admin", url=dashboard, role="evalcore_dashboard")
    assert accounts.exit_code == 2 and "accounts stay with the store's owner" in accounts.stderr

    # deploy.md: the dashboard role "cannot insert runs or edit the log or accounts"; the CI role
    # cannot write the log or the accounts either
    forbidden = {"evalcore_dashboard": ["INSERT INTO runs (run_id, created_at) VALUES ('x', 't')",
                                        "UPDATE audit_log SET comment = 'edited'", "DELETE FROM audit_log",
                                        "UPDATE users SET role = 'admin'",
                                        "INSERT INTO users (name, role, password_hash) VALUES ('m', 'admin', 'x')"],
                 "evalcore_ci": ["UPDATE audit_log SET comment = 'edited'", "UPDATE audit_head SET seq = 0",
                                 "UPDATE users SET role = 'admin'"]}
    for role, statements in forbidden.items():
        with psycopg.connect(f"postgresql://{role}:{PASSWORDS[role]}@{host}/termgate", autocommit=True) as conn:
            for statement in statements:
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(statement)


def test_accounts_stay_with_the_owner(deployed):
    server, host = deployed
    owner = f"postgresql://termgate_owner@{host}/termgate"
    added = termgate("users", "add", "carol", "--role", "approver", url=owner, role="termgate_owner")
    assert added.exit_code == 0, added.output
