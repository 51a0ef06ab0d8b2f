"""The drift combiner: an L2-regularised logistic regression over the drift signals
(issue 18 item 2), fitted here in numpy and shipped as JSON (termgate/drift/drift_model.json).

A term is drift when its probability is at or above the cut-off; inside the uncertain band
around the cut-off it is unjudged. Each verdict's reason names the signals that pushed it
hardest towards its side, in words.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .signals import FEATURES, Signals
from ..errors import UsageError

__all__ = ["DriftModel", "fit_logistic", "SHIPPED_MODEL", "load_model", "describe"]

SHIPPED_MODEL = Path(__file__).with_name("drift_model.json")
"""The coefficients termgate ships; `termgate drift calibrate --out` never writes over it."""


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, iterations: int = 100,
                 tol: float = 1e-10, sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Newton's method (IRLS) for min Σ weight·log-loss + l2/2 ‖w‖² (the intercept unpenalised).

    Returns (weights, intercept). `x` should be standardised for `l2` to mean the same on
    every feature.
    """
    n, d = x.shape
    design = np.hstack([x, np.ones((n, 1))])
    theta = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(design @ theta, -35, 35)))
        grad = design.T @ (sw * (p - y)) + penalty * theta
        hessian = (design * (sw * p * (1 - p))[:, None]).T @ design + np.diag(penalty) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hessian, grad)
        theta -= step
        if float(np.abs(step).max()) < tol:
            break
    return theta[:-1], float(theta[-1])


@dataclass(frozen=True)
class DriftModel:
    """Standardisation, coefficients, cut-off and band of the combiner."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    intercept: float
    cutoff: float
    band: tuple[float, float]
    """Probabilities in [low, high) are unjudged; low ≤ cutoff ≤ high."""
    l2: float = 1.0
    trained_on: str = ""
    sha256: str = ""
    """Of the coefficients file this model was read from ('' when fitted in memory)."""
    named: int = 0
    """How many signals its file named (the rest weigh 0); 0 when fitted in memory (all)."""

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, l2: float = 1.0, cutoff: float = 0.5,
            band: tuple[float, float] = (0.5, 0.5), trained_on: str = "",
            sample_weight: np.ndarray | None = None) -> DriftModel:
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale = np.where(scale < 1e-9, 1.0, scale)
        weights, intercept = fit_logistic((x - mean) / scale, y.astype(float), l2, sample_weight=sample_weight)
        return cls(FEATURES, mean, scale, weights, intercept, cutoff, band, l2, trained_on)

    def probability(self, x: np.ndarray) -> np.ndarray:
        z = ((np.atleast_2d(x) - self.mean) / self.scale) @ self.weights + self.intercept
        return 1 / (1 + np.exp(-np.clip(z, -35, 35)))

    def contributions(self, x: np.ndarray) -> np.ndarray:
        """Each signal's push on the log-odds against an average term (positive: towards drift)."""
        return (x - self.mean) / self.scale * self.weights

    def sides(self, probabilities: np.ndarray, review: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(flagged, unjudged) per probability: unjudged inside the band [low, high) or where
        `review` is set (signals.review_reason gave a reason); flagged at or above the cut-off
        and not unjudged. The judge and calibration both decide through this."""
        p = np.asarray(probabilities, dtype=float)
        unjudged = (p >= self.band[0]) & (p < self.band[1])
        if review is not None:
            unjudged = unjudged | np.asarray(review, dtype=bool)
        return (p >= self.cutoff) & ~unjudged, unjudged

    def with_cutoff(self, cutoff: float | None, band: tuple[float, float] | None) -> DriftModel:
        from dataclasses import replace
        cut = self.cutoff if cutoff is None else cutoff
        if band is None:
            half = (self.band[1] - self.band[0]) / 2
            band = (max(0.0, cut - half), min(1.0, cut + half))
        if not 0 <= band[0] <= cut <= band[1] <= 1:
            raise UsageError(f"[drift] band = {list(band)!r} must hold the cut-off {cut}: [low, high] with "
                             "0 ≤ low ≤ cut-off ≤ high ≤ 1")
        return replace(self, cutoff=cut, band=(float(band[0]), float(band[1])))

    def to_json(self) -> str:
        return json.dumps({
            "model": "logistic-regression", "features": list(self.features),
            "mean": [round(float(v), 8) for v in self.mean], "scale": [round(float(v), 8) for v in self.scale],
            "weights": [round(float(v), 8) for v in self.weights], "intercept": round(self.intercept, 8),
            "cutoff": self.cutoff, "band": list(self.band), "l2": self.l2, "trained_on": self.trained_on,
        }, indent=1) + "\n"

    def write(self, path: str | Path) -> None:
        """Write the coefficients file whole or not at all (temp file, then rename); never
        over the shipped file or an existing one."""
        path = Path(path)
        try:
            _check_numbers(self)
        except ValueError as exc:
            raise UsageError(f"the refit cannot judge, nothing was written: {exc}") from None
        if path.resolve() == SHIPPED_MODEL.resolve():
            raise UsageError(f"{path} is the shipped coefficients file: write the refit elsewhere (--out)")
        if path.exists():
            raise UsageError(f"{path} exists: choose a new --out path (calibrate never overwrites)")
        try:
            fd, tmp = tempfile.mkstemp(prefix=".drift_model-", suffix=".json", dir=path.parent or ".")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(self.to_json())
                os.link(tmp, path)  # fails if the path appeared meanwhile: never overwrites
            finally:
                os.unlink(tmp)
        except FileExistsError:
            raise UsageError(f"{path} exists: choose a new --out path (calibrate never overwrites)") from None
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror}; nothing was written") from None


def _not_a_number(token: str) -> float:
    raise ValueError(f"{token} is not a JSON number")


def _check_numbers(model: DriftModel) -> None:
    """ValueError unless every number of the model can judge: one finite mean, scale (> 0) and
    weight per signal, a finite intercept, and a band in [0, 1] holding the cut-off. NaN
    coefficients would make every probability NaN, and NaN is neither drift nor unjudged."""
    arrays = (model.mean, model.scale, model.weights)
    if any(a.shape != (len(FEATURES),) or not np.isfinite(a).all() for a in arrays) or (model.scale <= 0).any():
        raise ValueError(f"mean, scale and weights must be {len(FEATURES)} finite numbers each (scale > 0)")
    low, high = model.band if len(model.band) == 2 else (float("nan"),) * 2
    if not np.isfinite(model.intercept) or not 0 <= low <= model.cutoff <= high <= 1:
        raise ValueError("intercept must be finite and the band [low, high] in [0, 1] must hold the cut-off")


def _by_name(raw: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, scale, weights) over this version's FEATURES from a file naming its own features,
    in any order: a signal the file does not name gets weight 0 (mean 0, scale 1), so a model
    fitted on fewer signals (data/drift/previous_model.json) still scores. ValueError for a
    name this version does not compute, a name given twice, or arrays of another length."""
    names = raw["features"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("'features' must be a list of signal names")
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise ValueError(f"it names {len(unknown)} signal(s) this termgate does not compute: "
                         + ", ".join(repr(n) for n in unknown[:5]) + (" …" if len(unknown) > 5 else ""))
    if len(set(names)) != len(names):
        raise ValueError("it names a signal twice: " + next(repr(n) for n in names if names.count(n) > 1))
    arrays = [np.array(raw[key], dtype=float) for key in ("mean", "scale", "weights")]
    if any(a.shape != (len(names),) for a in arrays):
        raise ValueError(f"mean, scale and weights must be {len(names)} finite numbers each (scale > 0), "
                         "one per named feature")
    columns = [FEATURES.index(n) for n in names]
    out = [np.zeros(len(FEATURES)), np.ones(len(FEATURES)), np.zeros(len(FEATURES))]
    for full, given in zip(out, arrays):
        full[columns] = given
    return out[0], out[1], out[2]


def load_model(path: str | Path | None = None) -> DriftModel:
    """The combiner from a coefficients file (default: the shipped one). The file names its
    features; they are matched to this version's signals by name (`_by_name`)."""
    path = Path(path) if path else SHIPPED_MODEL
    try:
        body = path.read_bytes()
        raw = json.loads(body, parse_constant=_not_a_number)
        if not isinstance(raw, dict) or raw.get("model") != "logistic-regression" or "features" not in raw:
            raise ValueError("not a coefficients file of the drift combiner")
        mean, scale, weights = _by_name(raw)
        model = DriftModel(FEATURES, mean, scale, weights, float(raw["intercept"]), float(raw["cutoff"]),
                           tuple(float(b) for b in raw["band"]), float(raw.get("l2", 1)), raw.get("trained_on", ""),
                           hashlib.sha256(body).hexdigest(), len(raw["features"]))
        _check_numbers(model)
        return model
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read drift coefficients {path}: {exc}") from None


PRIOR = {name: -1 for name in FEATURES if name.startswith(("sim_", "residual_", "wn_synonym", "wn_hypernym", "wn_path"))}
PRIOR.update(domain_fit=-1, token_overlap=-1, lookalike=1, short_form_of=-1, expansion_sim=-1, opposite_prefix=1,
             same_head=-1, other_head=1, spelling_variant=-1, wn_antonym=1, wn_derived=-1, wn_unrelated=1, wn_topic_in_domain=-1,
             wn_topic_elsewhere=1, wn_intended=-1, wn_other_sense=1, opposite_word=1, wn_gloss_overlap=-1,
             wn_gloss_shared=-1, wn_depth_intended=-1, same_head_fit=-1, head_sense_meant=-1, head_sense_other=1,
             head_not_kind=1, wn_path_other=1, wn_sibling=1, string_sibling=1, curated_sibling=1, curated_same=-1,
             modifier_swap=1, word_sense_meant=-1, word_sense_other=1, wn_opposite=1,
             opposite_curated=1, short_lookalike=1)
"""+1: a high value speaks for drift, −1: against; a signal whose weight happens to push the
other way (correlated signals share their weight) is not named as a reason."""

_WORDS = {  # signal -> (said when high, said when low); {ref} the reference, {v} the value
    "token_overlap": ("shares words with '{ref}'", "shares no word with the query or expected terms"),
    "spelled_alike": ("spelled like '{ref}'", None),
    "spelling_variant": ("a spelling of '{ref}'", None),
    "same_head": ("a kind of '{same_head}'", None),
    "other_head": ("shares a word with '{token_overlap}' but names another thing", None),
    "lookalike": ("looks like '{ref}' but unrelated in meaning", None),
    "short_form_of": ("abbreviation of '{ref}'", None),
    "expansion_of": ("expands the abbreviation '{ref}'", None),
    "short_form": ("a short form", None),
    "opposite_prefix": ("opposite prefix or suffix to '{ref}'", None),
    "opposite_word": ("the opposite of '{ref}' by one word", None),
    "wn_synonym_query": ("WordNet synonym of '{ref}'", None),
    "wn_synonym_expected": ("WordNet synonym of '{ref}'", None),
    "wn_hypernym_query": ("WordNet broader or narrower term of '{ref}'", None),
    "wn_hypernym_expected": ("WordNet broader or narrower term of '{ref}'", None),
    "wn_path_query": ("near '{ref}' in WordNet ({v:.2f})", "far from the query in WordNet"),
    "wn_path_expected": ("near '{ref}' in WordNet ({v:.2f})", "far from every expected term in WordNet"),
    "wn_path_intended": ("near '{ref}' in the query's sense in WordNet ({v:.2f})", None),
    "wn_depth_intended": ("in a narrow WordNet category with '{ref}' ({v:.2f})", None),
    "wn_intended": ("WordNet relates it to '{ref}' in the query's sense", None),
    "wn_other_sense": ("WordNet relates it to '{ref}' only in another sense", None),
    "wn_gloss_overlap": ("WordNet's definition ties it to '{ref}'", None),
    "wn_gloss_shared": ("its WordNet definition shares words with that of '{ref}'", None),
    "wn_antonym": ("WordNet antonym of '{ref}'", None),
    "wn_derived": ("WordNet derivative of '{ref}'", None),
    "wn_term_known": (None, "not in WordNet"),
    "wn_unrelated": ("no WordNet relation", None),
    "wn_topic_in_domain": ("WordNet files it under {topic}", None),  # {topic}: the domain, or a reference's
    "wn_topic_elsewhere": ("WordNet files it under another topic", None),
    "same_head_fit": ("a kind of '{same_head}' whose added words fit the query ({v:.2f})", None),
    "head_sense_meant": ("a kind of '{ref}' in the sense the query means", None),
    "head_sense_other": ("a kind of '{ref}' only in another sense of its head word", None),
    "head_not_kind": ("shares the head word of '{ref}' but WordNet does not file it under that word", None),
    "wn_path_other": ("near '{ref}' in WordNet only through another sense", None),
    "wn_sibling": ("a sibling of '{ref}' in WordNet (same parent, not the same thing)", None),
    "string_sibling": ("a sibling of '{ref}' (one letter or number apart)", None),
    "curated_sibling": ("a sibling of '{ref}' (a rival brand, another drug of its class, another grade; termgate's list)", None),
    "curated_same": ("another name of '{ref}' (a brand and its generic; termgate's list)", None),
    "word_sense_meant": ("WordNet relates it to the query's word '{ref}' in the sense the query means", None),
    "word_sense_other": ("WordNet relates it to the query's word '{ref}' only in another sense", None),
    "modifier_swap": ("keeps the head word of '{ref}' but swaps its other words", None),
    "wn_opposite": ("opposed to '{ref}' in WordNet", None),
    "opposite_curated": ("the opposite of '{ref}' (termgate's list of domain opposites)", None),
    "short_lookalike": ("a short word spelled like '{spelled_alike}', not its abbreviation", None),
}


def _phrase(name: str, high: bool, s: Signals, domain: str | None) -> str | None:
    v = s[name]
    if name == "sim_query":
        return f"close to the query {v:.2f}" if high else f"far from the query {v:.2f}"
    if name == "sim_expected_max" and s.nearest_expected:
        return (f"close to expected '{s.nearest_expected}' {v:.2f}" if high else
                f"far from every expected term (nearest '{s.nearest_expected}' {v:.2f})")
    if name == "sim_expected_mean" and s.nearest_expected:
        return f"near the expected terms on average {v:.2f}" if high else f"far from the expected terms on average {v:.2f}"
    if name == "sim_context":
        return (f"close to the query with its expected terms {v:.2f}" if high else
                f"far from the query with its expected terms {v:.2f}")
    if name == "sim_domain" and domain:
        return f"within the domain '{domain}' {v:.2f}" if high else f"outside the domain '{domain}' {v:.2f}"
    if name == "domain_fit" and domain:
        return (f"fits '{domain}' as well as the query does ({v:+.2f})" if high else
                f"fits '{domain}' less than the query does ({v:+.2f})")
    if name == "short_form" and s["short_lookalike"]:
        return None  # spelled like a reference without being its abbreviation: no short form
    in_wordnet = s["wn_term_known"] or s["wn_head_known"]
    if name.startswith(("wn_path", "wn_depth")) and (not in_wordnet or (not high and s["wn_unrelated"])):
        return None  # 'not in WordNet' or 'no WordNet relation' says it
    if name == "wn_term_known" and not high and s["wn_head_known"]:
        return f"not in WordNet as a whole (read as a kind of '{s.references.get('wn_head', 'its last word')}')"
    if name == "wn_unrelated" and not in_wordnet:
        return None
    rest = s.references.get("modified")
    if name.startswith("residual_sim") and rest:
        where = {"residual_sim_query": "the query", "residual_sim_context": "the query with its expected terms"}.get(
            name, f"'{domain}'")
        return (f"its added words '{rest}' fit {where} ({v:.2f})" if high else
                f"its added words '{rest}' are far from {where} ({v:.2f})")
    expanded = s.references.get("expansion_of")
    if name == "expansion_sim" and expanded:
        return (f"expands '{expanded}' in the query's sense ({v:.2f})" if high else
                f"expands '{expanded}' in another sense (query {s['sim_query']:.2f})")
    synonym = s.references.get("wn_synonym_specific")
    if name == "wn_synonym_specific" and synonym:
        return (f"WordNet synonym of '{synonym}'" if high else
                f"shares one of the {round(1 / v) if v else 'many'} WordNet senses of '{synonym}'")
    template = _WORDS.get(name, (None, None))[0 if high else 1]
    if template is None:
        return None
    refs = s.references
    return template.format(ref=refs.get(name), v=v, same_head=refs.get("same_head", ""),
                           spelled_alike=refs.get("spelled_alike", ""),
                           token_overlap=refs.get("token_overlap", ""),
                           topic=f"a topic of '{refs['wn_topic_in_domain']}'" if "wn_topic_in_domain" in refs
                           else domain or "the query's topic")


def describe(model: DriftModel, s: Signals, probability: float, domain: str | None, top: int = 3,
             contrib: np.ndarray | None = None, order: np.ndarray | None = None) -> str:
    """The signals that pushed hardest towards the verdict's side, in words (`contrib`, `order`:
    this term's row of `model.contributions` and its order towards the verdict, when the caller
    computed them for many terms at once)."""
    contrib = model.contributions(s.values) if contrib is None else contrib
    towards_drift = probability >= model.cutoff
    if order is None:
        order = np.argsort(-contrib if towards_drift else contrib)[:12]
    contrib, values, mean = contrib.tolist(), s.values.tolist(), model.mean.tolist()
    phrases: list[str] = []
    if towards_drift and "sense" in s.references:  # the sense assumed: 'food court' is ...; the query means ...
        phrases.append(s.references["sense"])
    for i in order.tolist():
        if (contrib[i] > 0) != towards_drift or abs(contrib[i]) < 0.05:
            break
        name, high = model.features[i], values[i] > mean[i]
        prior = PRIOR.get(name, 0)
        if prior and (prior > 0) != (high == towards_drift):
            continue
        phrase = _phrase(name, high, s, domain)
        if phrase and phrase not in phrases:
            phrases.append(phrase)
        if len(phrases) == top:
            break
    return "; ".join(phrases) or "no single signal stands out"
