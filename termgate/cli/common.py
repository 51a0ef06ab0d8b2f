"""Shared pieces of the CLI: exit codes, error handling, tables."""

from __future__ import annotations

import math
import signal
import sys
import threading
from collections.abc import Sequence
from functools import wraps
from pathlib import Path

import click

from ..errors import TermgateError, InputError
from ..redact import redact_text
from ..text import strip_controls, terminal_safe

EXIT_OK, EXIT_NOT_RELEASABLE, EXIT_INPUT, EXIT_AWAITING, EXIT_REFUSED, EXIT_INCOMPLETE = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED = 130
"""Ctrl-C, as shells report a process ended by SIGINT."""


def exits_130_when_interrupted(message: str):
    """A command that Ctrl-C ends with one line (`message`) and exit 130, whatever the work
    was doing when it came: Python's KeyboardInterrupt, or the error DuckDB or a worker
    thread raises once interrupted ('Query interrupted', 'connection is busy'). Never
    click's 'Aborted!' and exit 1, which a pipeline would read as a failed gate."""
    def decorate(command):
        @wraps(command)
        def run(*args, **kwargs):
            if threading.current_thread() is not threading.main_thread():
                return command(*args, **kwargs)  # signals reach the main thread only
            seen: list[bool] = []
            before = signal.getsignal(signal.SIGINT)

            def on_interrupt(signum, frame):
                seen.append(True)
                raise KeyboardInterrupt

            if before is signal.SIG_IGN:  # started in the background: Ctrl-C is not ours to take
                return command(*args, **kwargs)
            signal.signal(signal.SIGINT, on_interrupt)
            try:
                return command(*args, **kwargs)
            except SystemExit:
                raise
            except BaseException:
                if not seen:
                    raise
                echo(message, err=True)
                sys.exit(EXIT_INTERRUPTED)
            finally:
                signal.signal(signal.SIGINT, before)
        return run
    return decorate


def echo(text: object = "", err: bool = False) -> None:
    """Every line the CLI prints: no terminal control sequence gets through (SPEC §5).
    Values from data inside a line are folded to one line first (terminal_safe)."""
    click.echo(strip_controls(str(text)), err=err)


def endpoint_lines(roles: list[tuple[str, object]]) -> list[str]:
    """`endpoint: URL (model m)` per endpoint the command calls, credentials redacted; `roles`
    are (role, LLMConfig) pairs such as ("model", sut), ("judge model", judge)."""
    by_url: dict[str, list[str]] = {}
    for role, config in roles:
        said = by_url.setdefault(config.shown_url or "(none named)", [])
        if not any(part.endswith(f" {config.model}") for part in said):
            said.append(f"{role} {config.model}")
    return [f"endpoint: {url} ({', '.join(said)})" for url, said in by_url.items()]


def say_endpoints(*roles: tuple[str, object]) -> None:
    """Tell, on standard error and before the first call, every endpoint a command calls
    (SPEC §5: the user sees where their data goes)."""
    for line in endpoint_lines(list(roles)):
        echo(line, err=True)


def judge_endpoint(judge) -> list[tuple[str, object]]:
    """The ("drift judge model", LLMConfig) role of an llm drift judge; none for the others."""
    config = getattr(judge, "llm", None)
    return [("drift judge model", config)] if config is not None and hasattr(config, "shown_url") else []


def fail(lines: Sequence[str], code: int = EXIT_INPUT) -> None:
    for line in lines:
        echo(terminal_safe(line), err=True)
    sys.exit(code)


def run_cli(fn, *args, **kwargs):
    """Call into the library, turning TermgateErrors into one clean line each and exit 2."""
    try:
        return fn(*args, **kwargs)
    except InputError as exc:
        fail(exc.lines())
    except TermgateError as exc:  # StoreBusyError among them
        fail([f"error: {exc}"])
    except RecursionError:
        fail(["error: an input file is nested too deeply to read (JSON or TOML nested hundreds of levels)"])
    except Exception as exc:
        damage = store_failure(exc)
        if damage is None:
            raise
        fail([damage])


def store_failure(exc: BaseException) -> str | None:
    """One line for a store that failed under a command, else None (a bug: its traceback).

    - A DuckDB file that cannot be read or written (cut short, corrupt, its disk failing).
    - A PostgreSQL server that cancelled a statement (`statement_timeout`, from the URL's
      `options`, PGOPTIONS or the role's settings; a lock wait past `lock_timeout`), or
      that went away mid-command.

    The failed transaction is rolled back, so the store holds nothing half-written; exit 2,
    not 1 (1 says a run is not releasable, or its audit chain broken)."""
    duckdb = sys.modules.get("duckdb")
    if duckdb is not None and isinstance(exc, duckdb.Error):
        text = _first_line(exc)
        if isinstance(exc, duckdb.IOException) or "Corrupt database file" in text:
            return (f"error: the store cannot be used: {text}; nothing more was recorded in it "
                    "(restore it from a backup, or give another --db)")
        return None
    psycopg = sys.modules.get("psycopg")
    if psycopg is None:
        return None
    errors = psycopg.errors
    text = redact_text(_first_line(exc)) or ""
    if isinstance(exc, errors.ReadOnlySqlTransaction):  # a standby, or default_transaction_read_only
        return (f"error: the PostgreSQL store is read-only for this session: {text}; nothing was recorded. "
                "Give --db the primary, or remove default_transaction_read_only (the --db URL's options, "
                "PGOPTIONS or the role's settings)")
    if isinstance(exc, errors.InvalidSchemaName):  # search_path names no schema that exists
        return (f"error: the PostgreSQL store has no schema to use: {text}; nothing was recorded. Check "
                "search_path (the --db URL's options, PGOPTIONS or the role's settings)")
    if not isinstance(exc, (psycopg.OperationalError, errors.IdleInTransactionSessionTimeout)):
        return None
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return (f"error: the PostgreSQL store cancelled a statement: {text}; it was rolled back. The time limit "
                "comes from statement_timeout (the --db URL's options, PGOPTIONS or the role's settings): "
                "raise or remove it and run the command again")
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return (f"error: the PostgreSQL store is busy: {text}; it was rolled back (lock_timeout); "
                "try again, or raise lock_timeout")
    return f"error: the PostgreSQL store failed: {text}; the statement was rolled back; try again"


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _fmt(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, tuple)):
        return ",".join(terminal_safe(v) for v in value)
    return terminal_safe(value)


def delta_line(stats: dict, p_spec: str = ".4f") -> str:
    """`+0.1234 (95% CI … to …, p = …, Holm …)` of one metric's paired statistics; a part
    that is None (one query has no interval) is left out, never formatted."""
    parts = []
    if stats.get("ci_low") is not None and stats.get("ci_high") is not None:
        parts.append(f"95% CI {stats['ci_low']:+.4f} to {stats['ci_high']:+.4f}")
    for label, key in (("p =", "p_value"), ("Holm", "p_value_holm")):
        if stats.get(key) is not None:
            parts.append(f"{label} {stats[key]:{p_spec}}")
    return f"{stats['mean_delta']:+.4f}" + (f" ({', '.join(parts)})" if parts else "")


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]], max_width: int = 48) -> str:
    """A plain aligned text table; long cells are cut with an ellipsis."""
    cells = [[_fmt(v) for v in row] for row in rows]
    cells = [[c if len(c) <= max_width else c[: max_width - 1] + "…" for c in row] for row in cells]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(out)


def expect_head_option(fn):
    return click.option("--expect-head", metavar="COUNT:HASH",
                        help="Fail (exit 1) unless audit record COUNT still has HASH, as printed by an earlier "
                             "`audit head` line: anchors the chain against a rewritten or truncated store.")(fn)


def trust_root_option(fn):
    return click.option("--trust-root", metavar="ed25519:FINGERPRINT", default=None,
                        help="Fail (exit 1) unless the store's trust root is this key, as `termgate trust init` "
                             "printed it [default: $TERMGATE_TRUST_ROOT, else [trust] root in termgate.toml]: a "
                             "store rewritten whole, signatures and all, is refused.")(fn)


def say_trust(chain, err: bool = False) -> None:
    """The lines about the chain's signatures (SPEC §4): its trust root, records whose
    signature fails (named, they carry no authority); the warning that nothing is pinned
    goes to standard error."""
    if chain is None:
        return
    for line in chain.trust_lines():
        echo(terminal_safe(line), err=err or line.startswith("warning:"))


def store_option(fn):
    """--db: a DuckDB file or a PostgreSQL URL (every command runs on either backend)."""
    return click.option("--db", "db", default=None, metavar="PATH|URL",
                        help="The store: a DuckDB file, or postgresql://user@host/db (the team store; the password "
                             "from the URL, PGPASSWORD or a service file, never printed) [default: $TERMGATE_DB, "
                             "else data/termgate.duckdb].")(fn)




def report_options(fn):
    """--json, --html and --junit: where the reports go (a regular file, or - for standard output)."""
    for flag, dest, what in reversed((("--json", "json_out", "the JSON report"), ("--html", "html_out", "the HTML report"),
                                      ("--junit", "junit_out", "JUnit XML"))):
        fn = click.option(flag, dest, type=click.Path(dir_okay=False, allow_dash=True),
                          help=f"Write {what} here (- for standard output).")(fn)
    return fn


def retrieval_options(fn):
    """--corpus, --qrels, --search-engine and --trec-runs: the run's retrieval effect
    (docs/retrieval.md)."""
    options = (
        click.option("--corpus", type=click.Path(dir_okay=False),
                     help="Documents the embedded engine indexes (JSONL of id, title, text): with --qrels, the "
                          "golden queries are searched unexpanded, with the baseline's terms and with this run's."),
        click.option("--qrels", type=click.Path(dir_okay=False),
                     help="Relevance judgments (TREC qrels, or JSONL of query_id, doc_id, grade): measures nDCG, "
                          "recall, MRR and P per query and gates on lost nDCG (docs/retrieval.md)."),
        click.option("--search-engine", type=click.Choice(["tantivy", "http"]),
                     help="tantivy: the embedded index of --corpus; http: your engine, as [retrieval.http] in "
                          "termgate.toml says [default: [retrieval] engine, else tantivy]."),
        click.option("--trec-runs", type=click.Path(file_okay=False),
                     help="Write the TREC run files here: unexpanded.trec, baseline.trec, candidate.trec."),
    )
    for option in reversed(options):
        fn = option(fn)
    return fn


def retrieval_setup(corpus: str | None, qrels: str | None, engine: str | None, trec_runs: str | None, settings):
    """The retrieval setup the options ask for (None without --qrels), its inputs read and
    validated before any scoring: exit 2 on a problem."""
    if qrels is None:
        given = next((flag for flag, value in (("--corpus", corpus), ("--search-engine", engine),
                                               ("--trec-runs", trec_runs)) if value is not None), None)
        if given:
            raise click.UsageError(f"{given} measures retrieval against relevance judgments: give --qrels too")
        return None
    from ..retrieval.configure import open_setup

    return run_cli(open_setup, corpus, qrels, settings.retrieval, settings.source, engine)


def trec_run_paths(trec_runs: str | None) -> dict[str, str | None]:
    """The report paths of the three TREC run files (refused like every output when they
    would replace an input)."""
    from ..retrieval.outcome import VARIANTS

    if trec_runs is None:
        return {}
    return {f"trec_{variant}": str(Path(trec_runs) / f"{variant}.trec") for variant in VARIANTS}
