"""Content hashes of parsed inputs, defined once for both scoring engines (SPEC §4).

Each golden item and each query's generated terms is written as a length-prefixed string
(`<utf-8 bytes>:<text>`; floats as Python's repr, which DuckDB's DOUBLE -> VARCHAR cast
reproduces), hashed with SHA-256, and the file's hash is the SHA-256 of those hex digests
in golden-set order. The columnar engine (`evalcore.columnar`) computes the same strings in
SQL; a test holds the two to the same bytes. Whitespace, key order, a BOM or CRLF line
ends do not change a hash; any parsed value does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

__all__ = ["golden_item_digest", "generated_item_digest", "combine"]


def _lp(text: str) -> str:
    return f"{len(text.encode())}:{text}"


def _opt(text: str | None) -> str:
    return "-" if text is None else _lp(text)


def golden_item_digest(query_id: str, query: str, domain: str | None, intent: str | None,
                       expected: Iterable[tuple[str, float]], forbidden: Iterable[str], critical: bool) -> str:
    """One golden item as parsed (terms before normalisation, context.domain as given)."""
    expected = list(expected)
    forbidden = list(forbidden)
    parts = [_lp(query_id), _lp(query), _opt(domain), _opt(intent), f"{len(expected)}:"]
    parts += [f"{_lp(term)}{float(weight)!r};" for term, weight in expected]
    parts.append(f"{len(forbidden)}:")
    parts += [_lp(term) for term in forbidden]
    parts.append("T" if critical else "F")
    return hashlib.sha256("".join(parts).encode()).hexdigest()


def generated_item_digest(query_id: str, terms: Mapping[str, float], error: str | None) -> str:
    """One golden query's generated terms after normalisation and merging (rule 1)."""
    parts = [_lp(query_id), f"{len(terms)}:"]
    parts += [f"{_lp(term)}{float(weight)!r};" for term, weight in terms.items()]
    parts.append(_opt(error))
    return hashlib.sha256("".join(parts).encode()).hexdigest()


def combine(digests: Iterable[str]) -> str:
    """The hash of a whole file from its items' digests, in golden-set order."""
    return hashlib.sha256("".join(digests).encode()).hexdigest()
