"""The torch-free encoder (termgate.drift.encoder) against sentence-transformers (issue 18, item 5).

Every text of a few hundred varied ones (short terms, sentences past the 64-token limit,
accents, punctuation, scripts, empty and blank strings) must get a vector at cosine ≥ 0.999
of sentence-transformers' for all-MiniLM-L6-v2, at termgate's max_seq_length (64) and at the
model's own (256); the token ids must be the same as sentence-transformers' tokenizer gives.
sentence-transformers is a test-only dependency; without it those comparisons skip.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from termgate.drift.embeddings import (DEFAULT_MODEL, MAX_SEQ_LENGTH, CachedEmbedder, NumpyEmbedder, OpenAIEmbedder,
                                       SentenceTransformerEmbedder, make_embedder, packaged_model_available)
from termgate.drift.encoder import (MiniLMEncoder, _gelu_, packaged_model_folder, read_safetensors,
                                    supported_model_folder)
from termgate.errors import UsageError

needs_model = pytest.mark.skipif(not packaged_model_available(), reason="embedding extra not installed")
try:
    import sentence_transformers  # noqa: F401
    HAVE_ST = True
except ImportError:
    HAVE_ST = False
needs_st = pytest.mark.skipif(not (HAVE_ST and packaged_model_available()),
                              reason="sentence-transformers (a test dependency) is not installed")

MIN_COSINE = 0.999

TERMS = """heart attack|myocardial infarction|MI|AMI|GORD|NDA|tort|torte|hypertension|hypotension|
tachycardia|bradycardia|pleural effusion|conservatorship|bivens action|removability|habeas corpus|
res ipsa loquitur|voir dire|amicus curiae|estoppel|indemnification clause|non-compete agreement|
running shoes|wireless earbuds|4K TV|USB-C cable|phone case|size 10½ boots|men's t-shirt|
stainless-steel water bottle|noise-cancelling headphones|court|basketball court|food court|
appeal|apple|Apple iPhone 15 Pro Max|kumquat|banana|guitar|lawyer|attorney|counsel|solicitor|
barrister|paralegal|acetaminophen|paracetamol|ibuprofen 200mg|COVID-19|SARS-CoV-2|type 2 diabetes|
HbA1c|ECG|EKG|CT scan|MRI|x-ray|post-op|pre-existing condition|in vitro|e-commerce|B2B|SKU|
return policy|free shipping|buy now, pay later|Black Friday deals|coupon code SAVE20|
mother-in-law|rock'n'roll|state-of-the-art|O'Brien|don't|can't|won't|it's|"quoted"|'single'|
(parenthesised)|[bracketed]|{braced}|a/b testing|and/or|50%|$19.99|€20|£5|¥100|#hashtag|@mention|
user@example.com|https://example.com/path?q=1&r=2|C++|C#|.NET|node.js|3.14159|1,000,000|
2024-01-31|10:30am|A|I|x|ok|OK|Ok|HELLO WORLD|hello world|Hello World""".replace("\n", "").split("|")

ACCENTS = ["café", "Café", "CAFÉ", "naïve", "résumé", "façade", "jalapeño", "São Paulo", "Zürich", "Müller",
           "Ångström", "crème brûlée", "piñata", "Dvořák", "Łódź", "Ærøskøbing", "Straße", "fiancée",
           "déjà vu", "coöperate", "e\u0301le\u0300ve", "Ｆｕｌｌｗｉｄｔｈ", "ﬁne ligature", "Ⅻ roman"]

SCRIPTS = ["中文字符", "日本語のテキスト", "한국어 텍스트", "русский текст", "ελληνικά", "العربية", "עברית",
           "हिन्दी", "ไทย", "emoji 😀 test", "🎉🎉🎉", "👍🏽", "math ∑∫√∞ ≤ ≥", "arrows → ← ↔", "™ © ®",
           "mixed 中文 and English", "Ελληνικά and English"]

ODD = ["", " ", "  ", "\t", "\n", " \t\n ", ".", "!!!", "???", "...", "—", "–", "-", "'", '"', "()", "[]",
       "!?!?", "#", "@@@", "&", "*", "\u200b", "\u200bword\u200b", "\u00a0nbsp\u00a0", "ctrl\x07char",
       "tab\tseparated\twords", "line\nbreak", "  leading", "trailing  ", "  both  ", "a" * 99, "a" * 101,
       "b" * 300, "x" * 1000, "supercalifragilisticexpialidocious", "pneumonoultramicroscopicsilicovolcanoconiosis",
       "word " * 5, "0", "00000", "1 2 3 4 5 6 7 8 9 10", "[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]",
       "[cls] lower", "##subword", "<html><body>tag</body></html>", "\\backslash\\", "semi;colon:colon"]

LONG = [
    "The quick brown fox jumps over the lazy dog. " * 12,
    "A patient presenting with acute chest pain radiating to the left arm, diaphoresis and shortness of "
    "breath should be evaluated immediately for an acute coronary syndrome, including a twelve-lead "
    "electrocardiogram, serial troponin measurements, and a focused physical examination, before any "
    "decision is made about thrombolysis or percutaneous coronary intervention in a cardiac centre.",
    "In a civil action for deprivation of rights under color of state law, the plaintiff must show that the "
    "defendant acted under color of law and that the conduct deprived the plaintiff of rights secured by "
    "the Constitution or federal statutes; qualified immunity shields officials unless the right was "
    "clearly established at the time of the alleged misconduct, as courts have repeatedly held.",
    "Lightweight breathable mesh running shoes for men and women, with a cushioned midsole, non-slip rubber "
    "outsole, reinforced heel counter, removable insole, available in twelve colours and sizes 5 to 14, "
    "machine washable, free returns within 30 days, ships in one business day, rated 4.7 of 5 stars.",
    " ".join(f"token{i}" for i in range(200)),
    "; ".join(["semicolon separated clause"] * 30),
    "Ünïcödé àccénts éverywhere ìn thïs löng séntence, répétée plusieurs fois. " * 8,
    "中文" * 150,
]


def sentences(n: int, seed: int = 18) -> list[str]:
    """Deterministic sentences of 5 to 120 words from the terms above (many past 64 tokens)."""
    rng = random.Random(seed)
    words = " ".join(TERMS + ACCENTS + ["the", "of", "and", "a", "in", "with", "for", "is", "not"]).split()
    out = []
    for _ in range(n):
        k = rng.choice((5, 8, 12, 20, 30, 45, 60, 80, 120))
        s = " ".join(rng.choice(words) for _ in range(k))
        out.append(s.capitalize() + rng.choice((".", "!", "?", "", "...")))
    return out


TEXTS = list(dict.fromkeys(TERMS + ACCENTS + SCRIPTS + ODD + LONG + sentences(150)))


def test_the_texts_are_a_few_hundred_varied_ones():
    assert len(TEXTS) >= 300
    assert sum(1 for t in TEXTS if len(t.split()) > 64) >= 20  # past 64 tokens whatever the pieces


# -- against sentence-transformers ---------------------------------------------------------------


@pytest.fixture(scope="module")
def st_model():
    from sentence_transformers import SentenceTransformer
    return SentenceTransformer(str(packaged_model_folder()), device="cpu")


@pytest.fixture(scope="module")
def ours_64():
    return MiniLMEncoder(packaged_model_folder(), max_seq_length=MAX_SEQ_LENGTH)


@pytest.fixture(scope="module")
def ours_default():
    return MiniLMEncoder(packaged_model_folder())  # sentence_bert_config.json: 256


def _st_encode(model, texts, max_seq_length):
    model.max_seq_length = max_seq_length
    return model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                        show_progress_bar=False)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.mark.model  # torch's sentence-transformers, or the whole model over many texts
@needs_st
@pytest.mark.parametrize("max_seq_length", [MAX_SEQ_LENGTH, 256])
def test_vectors_agree_with_sentence_transformers(st_model, ours_64, ours_default, max_seq_length):
    ours = ours_64 if max_seq_length == MAX_SEQ_LENGTH else ours_default
    assert ours.max_seq_length == max_seq_length
    mine = ours.encode(TEXTS)
    theirs = _st_encode(st_model, TEXTS, max_seq_length)
    assert mine.shape == theirs.shape == (len(TEXTS), 384) and mine.dtype == np.float32
    cos = _cosines(mine, theirs)
    worst = int(np.argmin(cos))
    print(f"max_seq_length {max_seq_length}: {len(TEXTS)} texts, min cosine {cos.min():.7f} "
          f"({TEXTS[worst][:40]!r}), mean {cos.mean():.7f}")
    assert cos.min() >= MIN_COSINE, f"{TEXTS[worst]!r}: cosine {cos[worst]}"


@pytest.mark.model  # torch's sentence-transformers, or the whole model over many texts
@needs_st
def test_token_ids_are_sentence_transformers(st_model, ours_64, ours_default):
    for ours in (ours_64, ours_default):
        st_model.max_seq_length = ours.max_seq_length
        theirs = st_model.tokenize(TEXTS)
        mask = theirs["attention_mask"].numpy().astype(bool)
        expected = [row[m].tolist() for row, m in zip(theirs["input_ids"].numpy(), mask)]
        assert ours.tokenize(TEXTS) == expected


@pytest.mark.model  # torch's sentence-transformers, or the whole model over many texts
@needs_st
def test_the_default_embedder_matches_the_sentence_transformers_backend():
    """The two backends share model_id, hence the vector cache: their vectors must agree."""
    numpy_backend, st_backend = NumpyEmbedder(), SentenceTransformerEmbedder()
    assert numpy_backend.model_id == st_backend.model_id == f"sentence-transformers/{DEFAULT_MODEL}"
    texts = TERMS[:60] + LONG[:3]
    assert _cosines(numpy_backend.embed(texts), st_backend.embed(texts)).min() >= MIN_COSINE


# -- tokenizer edge cases ------------------------------------------------------------------------


@needs_model
def test_tokenizer_edge_cases(ours_64, ours_default):
    cls, sep, unk = 101, 102, 100
    ids = dict(zip(ODD + ACCENTS, ours_64.tokenize(ODD + ACCENTS)))
    for blank in ("", " ", "\t", "\n", " \t\n ", "\u200b"):
        assert ids[blank] == [cls, sep]  # nothing but the special tokens
    assert ids["café"] == ids["Café"] == ids["CAFÉ"] == ours_64.tokenize(["cafe"])[0]  # lower-cased, accents stripped
    assert ids["  both  "] == ours_64.tokenize(["both"])[0]
    assert ids["a" * 101] == [cls, unk, sep]  # WordPiece gives up past 100 characters
    assert ids["[CLS]"] == [cls, cls, sep]  # special tokens in the text are special tokens
    assert ours_64.tokenize(["中文"])[0] == [cls, *ours_64.tokenize(["中"])[0][1:-1], *ours_64.tokenize(["文"])[0][1:-1], sep]
    for ours in (ours_64, ours_default):
        for row in ours.tokenize(LONG + ["word " * 600]):
            assert len(row) <= ours.max_seq_length and row[0] == cls and row[-1] == sep  # truncated, [SEP] kept
        assert len(ours.tokenize(["word " * 600])[0]) == ours.max_seq_length
    assert all(len(row) == 64 for row in ours_64.tokenize(LONG))
    assert max(map(len, ours_64.tokenize(TERMS))) < 64  # no padding (tokenizer.json asks for 128)


@pytest.mark.model  # torch's sentence-transformers, or the whole model over many texts
@needs_model
def test_vectors_do_not_depend_on_the_batch(ours_64):
    texts = ["heart attack", "", "a much longer text " * 10, "tort", "heart attack"]
    together = ours_64.encode(texts)
    alone = np.concatenate([ours_64.encode([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    np.testing.assert_allclose(together[0], together[4])
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5)
    small = MiniLMEncoder(packaged_model_folder(), max_seq_length=64, batch_tokens=1)  # one text per batch
    np.testing.assert_allclose(small.encode(texts), together, atol=1e-5)
    one, two = (MiniLMEncoder(packaged_model_folder(), max_seq_length=64, batch_tokens=8, workers=w).encode(TEXTS)
                for w in (1, 2))
    assert np.array_equal(one, two)  # whole batches per worker thread: the same arithmetic
    assert ours_64.encode([]).shape == (0, 384)


def test_gelu_is_the_erf_gelu():
    x = np.linspace(-12, 12, 48_001, dtype=np.float32)
    exact = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
    y = x.copy()
    _gelu_(y, *(np.empty_like(y) for _ in range(3)))
    assert np.abs(y - exact).max() < 1e-6


@needs_model
def test_weights_are_read_as_safetensors_reads_them():
    safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="safetensors is not installed")
    path = packaged_model_folder() / "model.safetensors"
    mine, theirs = read_safetensors(path), safetensors_numpy.load_file(str(path))
    assert mine.keys() == theirs.keys()
    for name, arr in theirs.items():
        assert mine[name].dtype == arr.dtype and np.array_equal(mine[name], arr), name


def test_unsupported_folders_are_named(tmp_path):
    assert "config.json" in supported_model_folder(tmp_path)
    for name in ("tokenizer.json", "model.safetensors"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "roberta"}))
    assert "roberta" in supported_model_folder(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (tmp_path / "modules.json").write_text(json.dumps([
        {"type": "sentence_transformers.models.Transformer", "path": ""},
        {"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"}]))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    assert "mean" in supported_model_folder(tmp_path)
    with pytest.raises(UsageError, match="sentence-transformers"):
        NumpyEmbedder(str(tmp_path)).embed(["x"])


# -- make_embedder and the backends --------------------------------------------------------------


@needs_model
def test_default_backend_is_numpy_with_the_old_model_id():
    embedder = make_embedder({}, None)
    assert isinstance(embedder, CachedEmbedder) and isinstance(embedder.inner, NumpyEmbedder)
    assert embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2"  # cache entries stay valid
    vectors = embedder.embed(["heart attack", "myocardial infarction", "banana"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 384)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert embedder.embed([]).shape == (0, 0)


def test_backends_by_name():
    assert isinstance(make_embedder({"backend": "numpy"}, None).inner, NumpyEmbedder)
    assert isinstance(make_embedder({"backend": "sentence-transformers"}, None).inner, SentenceTransformerEmbedder)
    with pytest.raises(UsageError, match="numpy, sentence-transformers, openai"):
        make_embedder({"backend": "torch"}, None)
    with pytest.raises(UsageError, match="sentence-transformers"):
        NumpyEmbedder("some-hub/model-name").embed(["x"])


def test_sentence_transformers_backend_without_it_says_what_to_do(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed
    monkeypatch.setattr("termgate.drift.embeddings._LOADED", {})
    with pytest.raises(UsageError, match='default backend "numpy"'):
        SentenceTransformerEmbedder().embed(["x"])


def test_openai_backend_still_works(monkeypatch):
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.path, body["model"], body["input"]))
            data = [{"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0]}
                    for i, t in reversed(list(enumerate(body["input"])))]  # out of order on purpose
            payload = json.dumps({"object": "list", "data": data, "model": body["model"],
                                  "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        url = f"http://127.0.0.1:{server.server_port}/v1"
        embedder = make_embedder({"backend": "openai", "model": "text-embed", "base_url": url}, None)
        assert isinstance(embedder.inner, OpenAIEmbedder) and embedder.model_id.endswith("/text-embed")
        vectors = embedder.embed(["ab", "abcd"])
        expected = np.array([[2, 1, 0], [4, 1, 0]], dtype=np.float32)
        np.testing.assert_allclose(vectors, expected / np.linalg.norm(expected, axis=1, keepdims=True), rtol=1e-6)
        assert seen == [("/v1/embeddings", "text-embed", ["ab", "abcd"])]
    finally:
        server.shutdown()


@needs_model
def test_the_default_embedder_imports_neither_torch_nor_sentence_transformers():
    code = ("import sys; from termgate.drift.embeddings import make_embedder; "
            "v = make_embedder({}, None).embed(['heart attack']); assert v.shape == (1, 384); "
            "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers', 'safetensors') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
