"""The pure scoring rules (SPEC §2): normalisation and the per-query formulas (`metrics`),
the DuckDB scorer (`scorer`), regression against a baseline (`regression`, rule 8), paired
statistics (`stats`), the gate (`gate`, rule 9) and one run's result (`run`). Nothing here
reads or writes the store, calls a model or prints.

Its public names load on first use (PEP 562): importing one module of the package does not
import the others.
"""

from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {
    'decide_gate': 'gate',
    'recommend': 'gate',
    'normalize_term': 'metrics',
    'format_pair': 'metrics',
    'safe_ratio': 'metrics',
    'f1_score': 'metrics',
    'meets': 'metrics',
    'EPSILON': 'metrics',
    'MacroMicro': 'metrics',
    'aggregate_columns': 'metrics',
    'BaselineRow': 'regression',
    'Baseline': 'regression',
    'RegressionResult': 'regression',
    'compare_to_baseline': 'regression',
    'pair_queries': 'regression',
    'revisions_of_one_set': 'regression',
    'DIFFERENT_GOLDEN_SET': 'regression',
    'OTHER_REVISION': 'regression',
    'EvaluationRun': 'run',
    'RESAMPLES': 'stats',
    'SEED': 'stats',
    'MDE_FACTOR': 'stats',
    'QueryMetrics': 'stats',
    'paired_deltas': 'stats',
    'bootstrap_interval': 'stats',
    'sign_flip_p_value': 'stats',
    'holm': 'stats',
    'mde': 'stats',
    'DeltaStats': 'stats',
    'describe_delta': 'stats',
    'compute_statistics': 'stats',
    'describe_pairs': 'stats',
    'mark_noise': 'stats',
}
"""name -> the submodule that defines it."""

__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
