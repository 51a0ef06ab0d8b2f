"""Term drift (SPEC §2 rule 5): the judge protocol and the combiner judge (`judge`), its
signals (`signals`, `lexical`), coefficients (`model`), the numpy MiniLM encoder
(`encoder`, `embeddings`), WordNet (`lexicon`), the LLM judge (`llm_judge`), choosing a
judge from the settings (`resolve`) and calibrating one on labelled rows (`calibration`).

Its public names load on first use (PEP 562): importing one module of the package does not
import the others.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    'LabelledRow': 'calibration',
    'Figures': 'calibration',
    'HARD_KINDS': 'calibration',
    'load_rows': 'calibration',
    'load_calibration': 'calibration',
    'candidates_of': 'calibration',
    'roc_auc': 'calibration',
    'grouped_folds': 'calibration',
    'cross_validate': 'calibration',
    'figures': 'calibration',
    'choose_band': 'calibration',
    'choose_cutoff': 'calibration',
    'calibrate_combiner': 'calibration',
    'measure_judge': 'calibration',
    'L2_CHOICES': 'calibration',
    'log_loss': 'calibration',
    'choose_l2': 'calibration',
    'Embedder': 'embeddings',
    'NumpyEmbedder': 'embeddings',
    'SentenceTransformerEmbedder': 'embeddings',
    'OpenAIEmbedder': 'embeddings',
    'CachedEmbedder': 'embeddings',
    'DEFAULT_MODEL': 'embeddings',
    'DEFAULT_BACKEND': 'embeddings',
    'BACKENDS': 'embeddings',
    'MAX_SEQ_LENGTH': 'embeddings',
    'packaged_model_available': 'embeddings',
    'make_embedder': 'embeddings',
    'MiniLMEncoder': 'encoder',
    'blas_threads': 'encoder',
    'read_safetensors': 'encoder',
    'supported_model_folder': 'encoder',
    'packaged_model_folder': 'encoder',
    'DriftCandidate': 'judge',
    'DriftVerdict': 'judge',
    'DriftJudge': 'judge',
    'NoDriftJudge': 'judge',
    'EmbeddingDriftJudge': 'judge',
    'CosineDriftJudge': 'judge',
    'HybridDriftJudge': 'judge',
    'JUDGE_NAMES': 'judge',
    'DEFAULT_EMBEDDING_THRESHOLD': 'judge',
    'embedding_available': 'judge',
    'OPPOSITES': 'lexical',
    'OPPOSITE_SUFFIXES': 'lexical',
    'NEGATIONS': 'lexical',
    'tokens': 'lexical',
    'edit_ratio': 'lexical',
    'char_overlap': 'lexical',
    'token_overlap': 'lexical',
    'is_abbreviation': 'lexical',
    'opposite_prefix': 'lexical',
    'differing_words': 'lexical',
    'residual': 'lexical',
    'head_word': 'lexical',
    'SOURCE': 'lexicon',
    'WORDNET_ROOT': 'lexicon',
    'LexiconEntry': 'lexicon',
    'Relation': 'lexicon',
    'WordNet': 'lexicon',
    'LexiconCache': 'lexicon',
    'CachedLexicon': 'lexicon',
    'relate': 'lexicon',
    'merged_closure': 'lexicon',
    'depth_similarity': 'lexicon',
    'intended_senses': 'lexicon',
    'phrase_head': 'lexicon',
    'WORD': 'lexicon',
    'PREPOSITIONS': 'lexicon',
    'kind_of': 'lexicon',
    'gloss_stem': 'lexicon',
    'wordnet_available': 'lexicon',
    'LLMDriftJudge': 'llm_judge',
    'TermVerdict': 'llm_judge',
    'JudgeAnswer': 'llm_judge',
    'DriftModel': 'model',
    'fit_logistic': 'model',
    'SHIPPED_MODEL': 'model',
    'load_model': 'model',
    'describe': 'model',
    'resolve_judge': 'resolve',
    'combiner_model': 'resolve',
    'lexicon_for': 'resolve',
    'FEATURES': 'signals',
    'DOMAIN_GLOSSES': 'signals',
    'Signals': 'signals',
    'compute_signals': 'signals',
    'without_gc_pauses': 'signals',
    'domain_text': 'signals',
}
"""name -> the submodule that defines it."""

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    if name in ['calibration', 'embeddings', 'encoder', 'judge', 'lexical', 'lexicon', 'llm_judge', 'model', 'resolve', 'signals']:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
