"""Judge agreement (issue 19 item 4): how far the drift judge agrees with reviewers' verdicts,
and reviewers with each other — Cohen's kappa with a bootstrap 95% interval, the judge's
precision and recall against reviewers, and the 2×2 table with every cell's count.

A verdict's label is drift (`drift`) or not drift (`synonym`, `related`). Only false
positives the judge is asked about count (SPEC §2 rule 5: not matched, forbidden or
underweight terms), and a term the judge left unjudged is counted apart, never as agreement
or disagreement. Each reviewer's standing verdict (termgate.governance.verdicts) is one observation.

Two judges are measured: the **current** one, built from the configuration as `evaluate`
builds it and asked again about every verdict term, and the one **recorded** with each run
(what its judge said of the term when the verdict was given), per judge configuration.
The sign-off check (`judge_unvalidated`) reads the recorded figures of the run's own
judge configuration, so it never loads a model.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from ..scoring.metrics import EPSILON, safe_ratio
from .verdicts import LABELS, Verdict, list_verdicts

__all__ = ["RESAMPLES", "SEED", "MIN_VERDICTS", "cohen_kappa", "kappa_interval", "AgreementTable", "agreement_table",
           "JudgeAgreement", "RaterAgreement", "AgreementReport", "judge_agreement", "rater_agreement",
           "agreement_report", "unvalidated_judges", "judge_unvalidated", "judge_items", "config_id", "recorded_agreement",
           "rejudge"]

RESAMPLES = 2_000
SEED = 0
MIN_VERDICTS = 30
"""Fewer verdicts than this in a domain and judge configuration: no sign-off flag (issue 19)."""


def cohen_kappa(matrix) -> float:
    """Cohen's kappa of a k×k table of counts (rows one rater, columns the other):
    (p_o − p_e) / (1 − p_e). NaN when the table is empty or both raters gave every item one
    and the same class (p_e = 1: agreement by chance alone, kappa undefined)."""
    m = np.asarray(matrix, dtype=float)
    n = m.sum()
    if n == 0:
        return math.nan
    observed = np.trace(m) / n
    chance = float((m.sum(axis=1) / n) @ (m.sum(axis=0) / n))
    if 1 - chance < EPSILON:
        return math.nan
    return float((observed - chance) / (1 - chance))


def _kappas(draws: np.ndarray, k: int) -> np.ndarray:
    """cohen_kappa of each row of `draws` (resamples × k·k cell counts), vectorised."""
    m = draws.reshape(len(draws), k, k).astype(float)
    n = m.sum(axis=(1, 2))
    observed = np.trace(m, axis1=1, axis2=2) / n
    chance = np.einsum("ri,ri->r", m.sum(axis=2) / n[:, None], m.sum(axis=1) / n[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(1 - chance < EPSILON, np.nan, (observed - chance) / (1 - chance))


def kappa_interval(matrix, resamples: int = RESAMPLES, seed: int = SEED, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of kappa over the rated items (resampled with
    replacement, n each). A resample of n items is a multinomial draw of n over the table's
    cells — the grouped scheme termgate.scoring.stats uses for means, exactly the same distribution
    as drawing item by item. Resamples whose kappa is undefined are left out; (nan, nan)
    for fewer than 2 items or when none is defined."""
    m = np.asarray(matrix, dtype=np.int64)
    n = int(m.sum())
    if n < 2:
        return math.nan, math.nan
    draws = np.random.default_rng(seed).multinomial(n, m.ravel() / n, size=resamples)
    kappas = _kappas(draws, m.shape[0])
    kappas = kappas[~np.isnan(kappas)]
    if not len(kappas):
        return math.nan, math.nan
    alpha = (1 - level) / 2
    low, high = np.percentile(kappas, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high)


@dataclass(frozen=True)
class AgreementTable:
    """A drift judge (or one reviewer) against reviewers (or another), drift the positive class."""

    both_drift: int
    """Judge drift, reviewer drift."""
    judge_only: int
    """Judge drift, reviewer not drift (a false flag)."""
    reviewer_only: int
    """Judge not drift, reviewer drift (a miss)."""
    neither: int
    """Both not drift."""
    kappa: float
    ci_low: float
    ci_high: float
    unjudged: int = 0
    """Verdict terms the judge left unjudged: in no cell."""

    @property
    def n(self) -> int:
        return self.both_drift + self.judge_only + self.reviewer_only + self.neither

    @property
    def precision(self) -> float:
        """Of the terms the judge flagged, the share reviewers called drift (0 when none flagged)."""
        return safe_ratio(self.both_drift, self.both_drift + self.judge_only)

    @property
    def recall(self) -> float:
        """Of the terms reviewers called drift, the share the judge flagged (0 when none)."""
        return safe_ratio(self.both_drift, self.both_drift + self.reviewer_only)

    def matrix(self) -> np.ndarray:
        return np.array([[self.both_drift, self.judge_only], [self.reviewer_only, self.neither]])


def agreement_table(pairs, unjudged: int = 0, resamples: int = RESAMPLES, seed: int = SEED) -> AgreementTable:
    """The table of (judge says drift, reviewer says drift) pairs, with kappa and its interval."""
    cells = [[0, 0], [0, 0]]
    for judge, reviewer in pairs:
        cells[0 if judge else 1][0 if reviewer else 1] += 1
    low, high = kappa_interval(cells, resamples, seed)
    return AgreementTable(cells[0][0], cells[0][1], cells[1][0], cells[1][1], cohen_kappa(cells), low, high, unjudged)


def config_id(config: str | dict | None) -> str:
    """A short, stable name of a drift-judge configuration: 8 hex digits of its canonical JSON."""
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError:
            pass
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:8]


@dataclass(frozen=True)
class JudgeAgreement:
    """One domain and judge configuration against the reviewers' verdicts."""

    domain: str | None
    judge: str
    """The judge's name (embedding, hybrid, llm, none)."""
    config: str
    """Its configuration, canonical JSON."""
    source: str
    """current (re-judged now) or recorded (what the run's judge said then)."""
    table: AgreementTable

    @property
    def config_id(self) -> str:
        return config_id(self.config)


@dataclass(frozen=True)
class RaterAgreement:
    """Two reviewers on the terms both gave a standing verdict on, in one domain."""

    domain: str | None
    reviewer_a: str
    reviewer_b: str
    table: AgreementTable
    """reviewer_a as the "judge" rows, reviewer_b as the columns (drift or not)."""
    label_kappa: float
    """Kappa over the three labels (synonym, related, drift)."""


@dataclass(frozen=True)
class AgreementReport:
    judges: list[JudgeAgreement] = field(default_factory=list)
    raters: list[RaterAgreement] = field(default_factory=list)
    verdicts: int = 0
    """Standing verdicts read (before leaving out terms the judge is never asked about)."""


def _canonical(config: str | None) -> str:
    try:
        return json.dumps(json.loads(config or "null"), sort_keys=True)
    except ValueError:
        return config or ""


def _judged(verdicts: list[Verdict]) -> list[Verdict]:
    """The verdicts on false positives a drift judge is asked about."""
    return [v for v in verdicts if v.term_kind == "FP"]


def _grouped(rows, key) -> dict:
    out: dict = defaultdict(list)
    for row in rows:
        out[key(row)].append(row)
    return out


def recorded_agreement(verdicts: list[Verdict], resamples: int = RESAMPLES, seed: int = SEED) -> list[JudgeAgreement]:
    """Per domain and recorded judge configuration: the run's judge, as it said then."""
    out = []
    groups = _grouped(_judged(verdicts), lambda v: (v.domain, _canonical(v.judge_config)))
    for (domain, config), group in sorted(groups.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        decided = [v for v in group if v.judge_verdict != "unjudged"]
        table = agreement_table([(v.judge_verdict == "drift", v.drift) for v in decided], len(group) - len(decided),
                                resamples, seed)
        out.append(JudgeAgreement(domain, _judge_name(config), config, "recorded", table))
    return out


def _judge_name(config: str) -> str:
    try:
        return str((json.loads(config) or {}).get("judge", "?"))
    except (ValueError, AttributeError):
        return "?"


def rejudge(db, verdicts: list[Verdict], judge_name: str | None = None, settings=None) -> dict[tuple, tuple]:
    """Ask the current drift judge (built from the configuration as `evaluate` builds it;
    one per domain context) about every distinct verdict term: {(run_id, query_id, term):
    (drift True/False/None, canonical judge configuration)}."""
    from ..config import load_settings
    from ..drift.judge import DriftCandidate
    from ..drift.resolve import resolve_judge
    from ..store import StoredVectors
    from ..store.verdicts import verdict_context

    settings = settings or load_settings()
    wanted = list(dict.fromkeys((v.run_id, v.query_id, v.term) for v in _judged(verdicts)))
    runs, queries = verdict_context(db, sorted({rid for rid, _, _ in wanted}))
    intents = _intents(db, runs, wanted)
    by_context = _grouped([w for w in wanted if (w[0], w[1]) in queries], lambda w: runs[w[0]]["domain_context"])
    out: dict[tuple, tuple] = {}
    for context, keys in by_context.items():
        judge = resolve_judge(judge_name, settings, StoredVectors(db), context)
        config = json.dumps(judge.config(), sort_keys=True)
        candidates = []
        for rid, qid, term in keys:
            q = queries[(rid, qid)]
            candidates.append(DriftCandidate(qid, q["query"], term, q["domain"], intents.get((rid, qid)),
                                             tuple(q["expected_terms"] or ())))
        for key, verdict in zip(keys, judge.judge(candidates)):
            out[key] = (verdict.drift, config)
    return out


def _intents(db, runs: dict, wanted) -> dict[tuple[str, str], str | None]:
    """context.intent of each wanted query, from the stored golden file of its run (a
    judge weighs the intent as evaluate gave it; absent when the file is not stored)."""
    from ..store import golden_content

    out = {}
    for golden_hash, keys in _grouped([(rid, qid) for rid, qid, _ in wanted if rid in runs],
                                      lambda k: runs[k[0]]["golden_hash"]).items():
        ids = {qid for _, qid in keys}
        found = {}
        for line in (golden_content(db, golden_hash) or "").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and entry.get("query_id") in ids:
                context = entry.get("context") if isinstance(entry.get("context"), dict) else {}
                found[entry["query_id"]] = context.get("intent")
        out |= {(rid, qid): found.get(qid) for rid, qid in keys}
    return out


def judge_agreement(db, verdicts: list[Verdict], judge_name: str | None = None, settings=None,
                    resamples: int = RESAMPLES, seed: int = SEED) -> list[JudgeAgreement]:
    """Per domain and current judge configuration: the current judge re-judging every verdict term."""
    answers = rejudge(db, verdicts, judge_name, settings)
    judged = [(v, answers[(v.run_id, v.query_id, v.term)]) for v in _judged(verdicts)
              if (v.run_id, v.query_id, v.term) in answers]
    out = []
    groups = _grouped(judged, lambda pair: (pair[0].domain, pair[1][1]))
    for (domain, config), group in sorted(groups.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        decided = [(answer[0], v.drift) for v, answer in group if answer[0] is not None]
        table = agreement_table(decided, len(group) - len(decided), resamples, seed)
        out.append(JudgeAgreement(domain, _judge_name(config), config, "current", table))
    return out


def rater_agreement(verdicts: list[Verdict], resamples: int = RESAMPLES, seed: int = SEED) -> list[RaterAgreement]:
    """Per domain and pair of reviewers: their standing verdicts on the same (run, query, term)."""
    out = []
    for domain, group in sorted(_grouped(verdicts, lambda v: v.domain).items(), key=lambda kv: kv[0] or ""):
        by_reviewer: dict[str, dict[tuple, Verdict]] = defaultdict(dict)
        for v in group:
            by_reviewer[v.reviewer][(v.run_id, v.query_id, v.term)] = v
        for a, b in combinations(sorted(by_reviewer), 2):
            shared = sorted(by_reviewer[a].keys() & by_reviewer[b].keys())
            if not shared:
                continue
            pairs = [(by_reviewer[a][k], by_reviewer[b][k]) for k in shared]
            labels = np.zeros((len(LABELS), len(LABELS)), dtype=np.int64)
            for va, vb in pairs:
                labels[LABELS.index(va.label), LABELS.index(vb.label)] += 1
            out.append(RaterAgreement(domain, a, b, agreement_table([(va.drift, vb.drift) for va, vb in pairs],
                                                                    0, resamples, seed), cohen_kappa(labels)))
    return out


def agreement_report(db, domain: str | None = None, judge_name: str | None = None, settings=None,
                     resamples: int = RESAMPLES, seed: int = SEED, rejudge_terms: bool = True) -> AgreementReport:
    """Every figure `termgate drift agreement` prints, from the standing verdicts (of one domain)."""
    verdicts = list_verdicts(db, domain=domain)
    judges = recorded_agreement(verdicts, resamples, seed)
    if rejudge_terms:
        judges = judge_agreement(db, verdicts, judge_name, settings, resamples, seed) + judges
    return AgreementReport(judges, rater_agreement(verdicts, resamples, seed), len(verdicts))


def unvalidated_judges(db, run, settings=None) -> list[tuple[str, str]]:
    """(domain, message) for each high-risk domain of the run whose judge configuration has at
    least MIN_VERDICTS decided verdicts there and a recorded kappa below `drift_kappa_min`
    (none when that floor is off, the default). The floor and the high-risk domains are
    the store's policy in force (termgate.governance.policy), tightened by `settings`."""
    from .. import store
    from .policy import policy_of_store

    policy = policy_of_store(db, settings)
    minimum = policy.drift_kappa_min
    if minimum is None:
        return []
    run = store.get_run(db, run) if isinstance(run, str) else run
    config = _canonical(run["drift_judge_config"])
    out = []
    for domain in policy.high_risk_of(run):
        mine = [v for v in list_verdicts(db, domain=domain) if _canonical(v.judge_config) == config]
        table = agreement_table([(v.judge_verdict == "drift", v.drift) for v in _judged(mine)
                                 if v.judge_verdict != "unjudged"], resamples=0)
        if table.n >= MIN_VERDICTS and not math.isnan(table.kappa) and table.kappa < minimum - EPSILON:
            out.append((domain, f"drift judge unvalidated for {domain} (κ {table.kappa:.2f} < {minimum:.2f}, "
                                f"n = {table.n})"))
    return out


def judge_items(db, run) -> list:
    """signoff.FlaggedItem (kind `judge`, key `judge:DOMAIN:`) per domain judge_unvalidated names."""
    from .flagged import FlaggedItem

    return [FlaggedItem(f"judge:{domain}:", "judge", "", "", message) for domain, message in unvalidated_judges(db, run)]


def judge_unvalidated(db, run) -> str | None:
    """The sign-off flag for a high-risk run whose drift judge reviewers have not validated:
    e.g. `drift judge unvalidated for medical (κ 0.41 < 0.60, n = 57)` (SPEC §1.4
    `drift_kappa_min`, off by default; `run` a run id or a stored run). None otherwise."""
    found = unvalidated_judges(db, run)
    return "; ".join(message for _, message in found) if found else None
