"""`termgate dashboard`: the Streamlit dashboard from the installed package, on a store."""

from __future__ import annotations

import os
import sys

import click

from ..config import default_db_path
from .common import store_option

__all__ = ["dashboard_command", "streamlit_argv"]

STREAMLIT_OPTIONS = {
    "server.headless": "true",
    # the installed sources do not change under a running server; watching them (inotify over
    # site-packages, or polling) only costs
    "server.fileWatcherType": "none",
    "browser.gatherUsageStats": "false",
    "theme.base": "light",
    "theme.primaryColor": "#1f6feb",
    "client.toolbarMode": "minimal",
}
"""The server's settings; flags after `--` (or a .streamlit/config.toml in the folder it is
started from, for what is not set here) change them."""


def streamlit_flags(extra: tuple[str, ...]) -> list[str]:
    """`extra` when it holds only Streamlit flags (`--name value` or `--name=value`);
    anything else is a usage error, since `streamlit run` would hand it to the app, which
    ignores it: `termgate dashboard data/x.duckdb` must not quietly serve the default store."""
    it = iter(extra)
    for word in it:
        if not word.startswith("--") or word == "--":
            raise click.UsageError(
                f"unexpected argument {word!r}: the store is `--db PATH_OR_URL`, and what follows `--` "
                "goes to `streamlit run` as flags (`--name value`)")
        if "=" not in word and next(it, None) is None:
            raise click.UsageError(f"the Streamlit flag {word} needs a value")
    return list(extra)


def streamlit_argv(port: int, address: str | None, extra: tuple[str, ...] = ()) -> list[str]:
    """The command line that runs the packaged app under this interpreter's Streamlit."""
    from ..dashboard import SERVER
    argv = [sys.executable, "-m", "streamlit", "run", str(SERVER), "--server.port", str(port)]
    if address:
        argv += ["--server.address", address]
    for key, value in STREAMLIT_OPTIONS.items():
        argv += [f"--{key}", value]
    return argv + streamlit_flags(extra)


@click.command("dashboard", context_settings={"ignore_unknown_options": True})
@store_option
@click.option("--port", default=8501, show_default=True, type=click.IntRange(1, 65535), help="The port to serve on.")
@click.option("--address", default=None, metavar="HOST",
              help="The interface to listen on, e.g. 127.0.0.1 [default: Streamlit's, every interface].")
@click.argument("streamlit_args", nargs=-1, type=click.UNPROCESSED)
def dashboard_command(db, port, address, streamlit_args):
    """Serve the dashboard (runs, compare, sign-off, golden sets, prompts) on the store.

    The store reaches the server as TERMGATE_DB, never on its command line. Anything after
    `--` goes to `streamlit run` (e.g. `-- --server.fileWatcherType poll` while editing
    the pages). Stop it with Ctrl-C.

    Example: termgate dashboard --db data/termgate.duckdb --port 8501
    """
    env = dict(os.environ, TERMGATE_DB=db or default_db_path())
    argv = streamlit_argv(port, address, streamlit_args)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, env)  # the server is this process: Ctrl-C and signals reach it directly
