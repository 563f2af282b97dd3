"""The offline engine's reader: a small sentence model that reads meaning, not only words.

The offline passage scorer and judge had only words to go on (WordLlama's static vectors are
no better, measured as a soft-coverage feature). "How do I freeze a package
at its current version so upgrades skip it?" shares no content word with "How do I put a
package on hold?". all-MiniLM-L6-v2 (a 22M-parameter sentence encoder, 384 dimensions) reads
that pair as close. Its weights are kept in the repository (``minilm/`` beside this module,
Apache-2.0, with its licence and its source's digest), so nothing is downloaded and no model
framework is installed: a float16 copy of the model's own safetensors file, derived by
``bench.derive_reader`` and checked against its digest at load, read with the tokenizer's own
``tokenizer.json``.

It ranks right leads better for the judge and picks more leads that answer, held out and on
unseen PDFs (``bench.fit_passages``, ``bench.fit_confidence``; the figures and its cost are in
docs/measurements/passages.md, "The reader"). Each sentence is embedded once per process
(``_vectors`` keeps them); the workbench's BLAS runs single-threaded.

Without those files (or with ``MASIS_READER=false``) ``get_reader`` is None and the features it
gives are absent: the judge reads each as its fitted mean, the passage scorer leaves it out.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from masis_core.config import get_settings

log = logging.getLogger(__name__)

MODEL_DIR = Path(__file__).parent / "minilm"
WEIGHTS_FILE = "model-f16.safetensors"
# sha256 of WEIGHTS_FILE: all-MiniLM-L6-v2's weights (source digest in minilm/SOURCE.md) in
# float16, which moved no question's top sentence on the FAQ bench; another file is not loaded.
WEIGHTS_SHA256 = "1412996879d32323c08ebaab855fa26bf876057b4290314af56ebe0c29270541"
MAX_TOKENS = 128  # sentences; longer ones are read up to here
CACHE_SENTENCES = 50_000  # ~75 MB of vectors


def _erf(x: np.ndarray) -> np.ndarray:
    """erf for BERT's exact GELU (Abramowitz and Stegun 7.1.26, error under 1.5e-7): NumPy
    has none, and this is faster than SciPy's on these arrays (docs/measurements/performance.md)."""
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t
            + 0.254829592) * t  # fmt: skip
    return np.sign(x) * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gain + bias


class Encoder:
    """all-MiniLM-L6-v2's forward pass in NumPy: BERT's six layers, mean pooling, unit length.

    Why not sentence-transformers: importing PyTorch and loading the model through it took
    seconds in every process that answered (each CLI call, each browser session's first
    answer, each test server); this reads the same safetensors file with the tokenizer's own
    ``tokenizer.json``, digest included, in a fraction of that, and its vectors are the
    library's (``tests/test_reader.py`` checks them, on the model's own weights and on the
    float16 copy). It is as fast per sentence as the library (docs/measurements/passages.md,
    "The reader"; docs/measurements/performance.md). Sentences are batched by length, so a
    batch pads little, and each dense layer is one 2-D product (a 3-D one was much slower)."""

    HEADS = 12
    BATCH = 32

    def __init__(self, folder: Path, weights: str = WEIGHTS_FILE) -> None:
        # float16 on disk (half the size), float32 in the products, as the model was measured
        self._w = {k: v.astype(np.float32) for k, v in load_file(str(folder / weights)).items()}
        self._dense = {
            name.removesuffix(".weight"): np.ascontiguousarray(value.T)
            for name, value in self._w.items()
            if name.startswith("encoder.") and name.endswith(".weight") and value.ndim == 2
        }
        self._layers = len({name.split(".")[2] for name in self._dense})
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of the texts, in their order."""
        ids = [e.ids for e in self._tokenizer.encode_batch(texts)]
        out = np.zeros((len(texts), self._w["embeddings.LayerNorm.bias"].shape[0]), np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), self.BATCH):
            batch = order[start : start + self.BATCH]
            width = len(ids[batch[-1]])
            tokens = np.zeros((len(batch), width), np.int64)
            mask = np.zeros((len(batch), width), np.float32)
            for row, i in enumerate(batch):
                tokens[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1.0
            out[batch] = self._forward(tokens, mask)
        return out

    def _forward(self, tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self._w
        n, width = tokens.shape
        x = (
            w["embeddings.word_embeddings.weight"][tokens]
            + w["embeddings.position_embeddings.weight"][:width]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        hidden = x.shape[-1]
        head = hidden // self.HEADS
        padding = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in range(self._layers):
            p = f"encoder.layer.{layer}."

            def dense(name: str, h: np.ndarray, p: str = p) -> np.ndarray:
                flat = h.reshape(n * width, h.shape[-1]) @ self._dense[p + name]
                return (flat + w[p + name + ".bias"]).reshape(n, width, -1)

            def heads(h: np.ndarray) -> np.ndarray:
                return h.reshape(n, width, self.HEADS, head).transpose(0, 2, 1, 3)

            q, k, v = (heads(dense(f"attention.self.{m}", x)) for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(head)) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, width, hidden)
            x = _layer_norm(
                x + dense("attention.output.dense", context),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            h = dense("intermediate.dense", x)
            h = 0.5 * h * (1.0 + _erf(h / np.float32(np.sqrt(2.0))))
            x = _layer_norm(
                x + dense("output.dense", h),
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


class Reader:
    """Cosine similarity of a question to sentences, each sentence embedded once.

    The lock guards the cache only: runs in one process (two analysts on one server, the
    calibration job beside Research) embed their sentences at the same time, each on its own
    core (docs/measurements/performance.md), and a sentence both need may be embedded twice,
    never wrongly."""

    def __init__(self, encoder: Encoder) -> None:
        self._encoder = encoder
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def similarities(self, question: str, texts: list[str]) -> dict[str, float]:
        """Each text's cosine to the question."""
        wanted = list(dict.fromkeys([question, *texts]))
        with self._lock:
            known = {t: self._vectors[t] for t in wanted if t in self._vectors}
        missing = [t for t in wanted if t not in known]
        if missing:
            known.update(zip(missing, self._encoder.encode(missing), strict=True))
            with self._lock:
                self._vectors.update((t, known[t]) for t in missing)
                while len(self._vectors) > CACHE_SENTENCES:
                    self._vectors.popitem(last=False)
        q = known[question]
        return {t: float(known[t] @ q) for t in texts}


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@lru_cache(maxsize=1)
def get_reader() -> Reader | None:
    """The bundled reader, loaded once per process; None when it is switched off, missing,
    or not the weights we measured (logged once)."""
    if not get_settings().reader:
        return None
    folder = MODEL_DIR
    weights = folder / WEIGHTS_FILE
    if not weights.is_file() or _sha256(weights) != WEIGHTS_SHA256:
        log.warning("the reader's weights at %s are not the ones measured: not used", folder)
        return None
    try:
        encoder = Encoder(folder)
    except Exception as exc:  # a damaged install (tokenizers and safetensors raise their own)
        log.warning(
            "the offline reader at %s did not load (%s): restore it from the repository "
            "(git checkout -- masis_core/llm/minilm); answers are chosen and judged by "
            "their words alone",
            folder,
            exc,
        )
        return None
    return Reader(encoder)
