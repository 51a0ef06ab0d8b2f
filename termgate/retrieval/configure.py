"""The retrieval setup a command asks for: its inputs read and validated, its engine made
from `[retrieval]` in termgate.toml (docs/retrieval.md), before anything is scored.

    [retrieval]
    engine = "tantivy"                  # or "http": the team's own engine ([retrieval.http])
    analyzer = "en_stem"                # Tantivy's tokenizer for title and text
    fields = ["title", "text"]
    query = "{query}"                   # the original query's clause (Tantivy query syntax)
    term = '"{term}"^{weight}'          # each expansion term's clause
    index_dir = "~/.cache/termgate/indexes"
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError, Problem, UsageError
from .effect import RetrievalSetup

__all__ = ["ENGINES", "KEYS", "open_setup", "index_root"]

ENGINES = ("tantivy", "http")
KEYS = {"engine", "analyzer", "fields", "query", "term", "index_dir", "http"}


def index_root(table: dict) -> Path:
    """Where the embedded engine keeps its indexes: $TERMGATE_INDEX_DIR (the environment
    overrides the file, as for every setting), else `[retrieval] index_dir`, else
    $XDG_CACHE_HOME/termgate/indexes (~/.cache when unset)."""
    chosen = os.environ.get("TERMGATE_INDEX_DIR") or table.get("index_dir")
    if chosen:
        return Path(chosen).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "termgate" / "indexes"


def _problem(source: str | None, key: str, message: str) -> InputError:
    """A `[retrieval]` setting's problem at its line in the config file."""
    text = ""
    if source is not None:
        try:
            text = Path(source).read_text(encoding="utf-8-sig")
        except OSError:
            pass
    start = text.find("[retrieval")
    index = text.find(key.rsplit(".", 1)[-1], max(start, 0)) if start >= 0 else -1
    line = text.count("\n", 0, index) + 1 if index >= 0 else 0
    return InputError([Problem(source or "(settings)", line, f"retrieval.{key}", message)])


def open_setup(corpus: str | None, qrels: str, table: dict, source: str | None = None,
               engine: str | None = None) -> RetrievalSetup:
    """Read the corpus and the judgments and make the engine (`engine` overrides
    `[retrieval] engine`); every problem is an InputError naming file, line and field, or a
    UsageError for a missing option."""
    from .inputs import load_corpus, load_qrels

    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise _problem(source, unknown[0], f"unknown setting (known: {', '.join(sorted(KEYS))})")
    name = engine or table.get("engine", "tantivy")
    if name not in ENGINES:
        raise _problem(source, "engine", f"must be one of {', '.join(ENGINES)} (got {name!r})")
    if name == "tantivy" and corpus is None:
        raise UsageError("--qrels with the embedded engine needs --corpus: the documents to index "
                         "(JSONL of id, title, text); or set [retrieval] engine = \"http\" for your own engine")
    judgments = load_qrels(qrels)
    documents = load_corpus(corpus) if corpus is not None else None
    if name == "tantivy":
        made = _tantivy(documents, table, source)
    else:
        made = _http(table, source)
    return RetrievalSetup(documents, judgments, made)


def _tantivy(corpus, table: dict, source: str | None):
    from .engine import QueryTemplate, TantivyEngine

    fields = table.get("fields", list(QueryTemplate.fields))
    if not isinstance(fields, list) or not fields or not all(isinstance(f, str) for f in fields):
        raise _problem(source, "fields", "must be a non-empty list of field names, such as [\"title\", \"text\"]")
    pieces = {}
    for key in ("query", "term", "analyzer"):
        if key in table:
            if not isinstance(table[key], str) or not table[key].strip():
                raise _problem(source, key, "must be a non-empty string")
            pieces[key] = table[key]
    root = index_root(table)
    try:
        template = QueryTemplate(**{k: v for k, v in pieces.items() if k != "analyzer"}, fields=tuple(fields))
        return TantivyEngine(corpus, root, analyzer=pieces.get("analyzer", "en_stem"), template=template)
    except OSError as exc:
        where = "[retrieval] index_dir" if table.get("index_dir") else \
            "TERMGATE_INDEX_DIR" if os.environ.get("TERMGATE_INDEX_DIR") else "the default cache folder"
        raise UsageError(f"cannot keep the search index in {root} ({where}): {exc.strerror or exc}; point "
                         "[retrieval] index_dir or TERMGATE_INDEX_DIR at a writable folder") from None
    except ValueError as exc:  # TemplateError names its key; an unknown analyser is the analyser's
        key = getattr(exc, "key", "analyzer")
        raise _problem(source, key, str(exc).split(": ", 1)[-1]) from None


def _http(table: dict, source: str | None):
    from .http_engine import HttpEngine

    config = table.get("http")
    if not isinstance(config, dict):
        raise _problem(source, "http", "engine = \"http\" needs a [retrieval.http] table (docs/search-engines.md)")
    try:
        return HttpEngine.from_table(config)
    except ValueError as exc:  # EngineConfigError: "retrieval.http.KEY: message"
        where, _, message = str(exc).partition(": ")
        key = where.removeprefix("retrieval.") if where.startswith("retrieval.http") else "http"
        raise _problem(source, key, message or str(exc)) from None
