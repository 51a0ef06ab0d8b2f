"""A real PostgreSQL server that the tests start themselves: Debian's binaries, a private
data folder, a free port on 127.0.0.1, fsync off (about half a second to start).

`initdb` refuses to run as root, so as root the server runs as the `postgres` user
(runuser). Without the binaries the tests that need it skip with the reason; `.ci/run`
installs them, so CI always runs them.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def binaries() -> Path | None:
    """The folder holding initdb and pg_ctl, or None."""
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(candidate, "initdb"), os.X_OK):
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """Start with start(); `url(dbname)` for a superuser URL; create_database() per test."""

    def __init__(self):
        self.bin = binaries()
        self.folder = Path(tempfile.mkdtemp(prefix="termgate-pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self.as_root = os.geteuid() == 0
        self._counter = 0

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        cmd = list(args)
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120)

    def start(self, host_auth: str = "trust") -> PostgresServer:
        """`host_auth` for TCP connections (`scram-sha-256`: passwords are checked); the
        socket in `folder` always trusts, as a Debian server's peer sign-in does its superuser."""
        if self.as_root:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth-local", "trust",
                  "--auth-host", host_auth, "--no-sync")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-l", str(self.folder / "log"), "-o",
                  f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                  "-c synchronous_commit=off -c full_page_writes=off", "start")
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("PostgreSQL did not start: " + (self.folder / "log").read_text())

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, dbname: str = "postgres", user: str = "postgres", password: str | None = None,
            scheme: str = "postgresql") -> str:
        auth = user + (f":{password}" if password else "")
        return f"{scheme}://{auth}@127.0.0.1:{self.port}/{dbname}"

    def sql(self, statement: str, dbname: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True) as conn:
            conn.execute(statement)

    def create_database(self, template: str | None = None) -> str:
        """A new database owned by postgres, empty or a copy of `template` (a database
        nobody is connected to); its name."""
        self._counter += 1
        name = f"t{self._counter}_{os.getpid()}"
        self.sql(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return name
