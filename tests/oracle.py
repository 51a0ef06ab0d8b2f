"""An independent Python implementation of SPEC §2 rules 1–7 and the content hashes: the
oracle the production scorer (termgate.scoring.scorer, DuckDB SQL) is checked against, the way
ranx is checked against trec_eval.

It shares nothing with the scorer but the validated inputs (termgate.io's parse, as the
user gave it) and the drift-judge protocol: normalisation, merging, matching, drift,
pass/fail, failure reasons and hashes are written again here from the SPEC's text.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata

from termgate.drift.judge import DriftCandidate
from termgate.io import GeneratedSet, GoldenSet
from termgate.models import Thresholds

EPS = 1e-9


def normalise(term: str) -> str:
    """SPEC §2 rule 1, verbatim."""
    return " ".join(unicodedata.normalize("NFKC", term).casefold().split())


def merge(pairs) -> dict[str, float]:
    """Rule 1: equal after normalisation is one term, first-seen order, highest weight
    (the first of equal highest weights)."""
    out: dict[str, float] = {}
    for term, weight in pairs:
        key = normalise(term)
        if key not in out or weight > out[key]:
            out[key] = weight
    return out


def ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def pair(value: float, limit: float) -> str:
    for digits in range(2, 10):
        a, b = f"{value:.{digits}f}", f"{limit:.{digits}f}"
        if a != b:
            return f"{a} < {b}"
    return f"{value!r} < {limit!r}"


def _lp(text: str) -> str:
    return f"{len(text.encode())}:{text}"


def _opt(text: str | None) -> str:
    return "-" if text is None else _lp(text)


def entry_digest(query_id, query, context, expected, forbidden, critical) -> str:
    """One golden item's digest as parsed, length-prefixed (its golden_entry_hash)."""
    parts = [_lp(query_id), _lp(query), _opt(context.get("domain")), _opt(context.get("intent")),
             f"{len(expected)}:"]
    parts += [f"{_lp(term)}{float(weight)!r};" for term, weight in expected]
    parts.append(f"{len(forbidden)}:")
    parts += [_lp(term) for term in forbidden]
    parts.append("T" if critical else "F")
    return hashlib.sha256("".join(parts).encode()).hexdigest()


def golden_hash(golden: GoldenSet) -> str:
    """The golden set's revision: SHA-256 of the items' digests in order."""
    return hashlib.sha256("".join(entry_digest(*item) for item in golden.parsed).encode()).hexdigest()


def _generated_digest(query_id: str, terms: dict[str, float], error: str | None) -> str:
    parts = [_lp(query_id), f"{len(terms)}:"] + [f"{_lp(t)}{float(w)!r};" for t, w in terms.items()] + [_opt(error)]
    return hashlib.sha256("".join(parts).encode()).hexdigest()


def score(golden: GoldenSet, generated: GeneratedSet, thresholds: Thresholds, judge,
          errors: dict[str, str] | None = None, domain_context: str | None = None) -> tuple[list[dict], str]:
    """Per-query rows (the report's per_query_results keys) and the generated hash."""
    errors = errors or {}
    rows, candidates, owners, digests = [], [], [], []
    for query_id, query, context, expected_raw, forbidden_raw, critical in golden.parsed:
        expected = merge(expected_raw)
        forbidden = {normalise(t) for t in forbidden_raw}
        gen = {} if query_id in errors else merge(generated.expansions.get(query_id, []))
        domain = context.get("domain")
        domain = normalise(domain if domain is not None else domain_context) if (
            domain is not None or domain_context is not None) else None
        tp = [t for t, w in expected.items() if t in gen and gen[t] >= w - EPS]
        fp = [t for t in gen if t not in tp]
        fn = [t for t in expected if t not in tp]
        if gen:
            precision = ratio(len(tp), len(tp) + len(fp))
            recall = ratio(len(tp), len(tp) + len(fn)) if expected else 1.0
            f1 = ratio(2 * precision * recall, precision + recall)
        else:
            precision = recall = f1 = 0.0
        row = {"query_id": query_id, "original_query": query, "generated_terms": list(gen),
               "expected_terms": list(expected), "true_positives": tp, "false_positives": fp,
               "false_negatives": fn, "precision": precision, "recall": recall, "f1": f1,
               "drift": {}, "unjudged_terms": [], "critical": critical, "domain": domain or None,
               "notes": ([] if expected else ["no golden terms provided"])
               + ([] if query_id in generated.expansions or query_id in errors else ["no expansion generated"]),
               "weights": list(gen.values()),
               "error": errors.get(query_id),
               "golden_entry_hash": entry_digest(query_id, query, context, expected_raw, forbidden_raw, critical),
               "_expected": expected}
        for term in fp:
            if term in forbidden:
                row["drift"][term] = "forbidden term"
            elif judge.name != "none" and term not in expected and term != normalise(query):  # never drift
                candidates.append(DriftCandidate(query_id, query, term, row["domain"], context.get("intent"),
                                                 tuple(expected)))
                owners.append(row)
        rows.append(row)
        digests.append(_generated_digest(query_id, gen, errors.get(query_id)))
    for row, candidate, verdict in zip(owners, candidates, judge.judge(candidates) if candidates else []):
        if verdict.drift is None:
            row["unjudged_terms"].append(candidate.term)
        elif verdict.drift:
            row["drift"][candidate.term] = verdict.reason
    return [_finish(row, thresholds) for row in rows], hashlib.sha256("".join(digests).encode()).hexdigest()


def _finish(row: dict, t: Thresholds) -> dict:
    gen, expected, drift = row["generated_terms"], row.pop("_expected"), row.pop("drift")
    row["drift_terms"] = [term for term in gen if term in drift]
    row["drift_reasons"] = [drift[term] for term in row["drift_terms"]]
    row["unjudged_terms"] = [term for term in gen if term in row["unjudged_terms"]]
    row["term_drift_score"] = 1.0 - len(drift) / len(gen) if gen else 1.0
    weights = dict(zip(gen, row["weights"]))
    reasons = [f"error: {row['error']}"] if row["error"] is not None else []
    if not gen:
        reasons.append("empty expansion")
    reasons += [f"underweight: {term} {pair(weights[term], expected[term])}"
                for term in row["false_negatives"] if term in weights]
    ok = True
    for label, value, minimum in (("precision", row["precision"], t.precision_min),
                                  ("recall", row["recall"], t.recall_min),
                                  ("term_drift_score", row["term_drift_score"], t.drift_min)):
        if value < minimum - EPS:
            ok = False
            reasons.append(f"{label} {pair(value, minimum)}")
    forbidden = [term for term in row["drift_terms"] if drift[term] == "forbidden term"]
    if forbidden and (t.forbidden_fails == "all" or (t.forbidden_fails == "critical" and row["critical"])):
        ok = False  # a forbidden term fails the query whatever its drift score
        reasons += [f"forbidden term: {term}" for term in forbidden]
    row["failure_reasons"] = reasons
    row["passed"] = ok and row["error"] is None and bool(gen)
    return row


def macro(rows: list[dict], key: str) -> float:
    return math.fsum(r[key] for r in rows) / len(rows) if rows else 0.0
