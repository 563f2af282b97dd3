"""OCR of page images for pages without a usable text layer, with no download at run time.

Two engines. ``rapidocr`` (rapidocr-onnxruntime: PP-OCRv4 detection and recognition models
inside its wheel, so ``pip install -r requirements.txt`` is all it needs; Python < 3.13) is
always there. ``tesseract`` is Debian's ``tesseract-ocr`` binary, used when installed: it
reads a dense manual page several times faster than rapidocr, with fewer character errors
(bench/ocr_quality.py; docs/measurements/ocr.md), so ``auto`` prefers it.

Orientation: a page is read upright first; when the reading is unsure (low mean confidence),
tesseract's orientation detector names the turn (one more call, then one reading), and
rapidocr, which has none, reads the page again turned 180, 90 and 270 degrees and the most
confident reading wins. An upside-down page reads as low-confidence debris, and a sideways
one as tall boxes (whose confidence is scaled down: rapidocr reads them, but in the wrong
order), so upright pages (nearly all) cost one reading.

Everything here runs in the parse child (ingest.isolate): a page's time limit is a SIGALRM
timer, checked between the engine's model calls (a recognition batch takes at most a few
seconds), and the parent kills the child outright if even that fails.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any, Literal, Protocol

import numpy as np

log = logging.getLogger(__name__)

EngineName = Literal["auto", "rapidocr", "tesseract", "off"]
# Resolution of the image given to the engine (the bench's figures are at this resolution).
OCR_DPI = 200
# A page's image is shrunk below this many pixels: a 3 x 14,400 pt page at 200 dpi would ask
# for 6 GB. A letter page at 200 dpi is 3.7 megapixels.
MAX_OCR_PIXELS = 16_000_000
# A reading at least this confident (mean over lines, weighted by length) is taken as upright.
UPRIGHT_CONFIDENCE = 0.8
ROTATIONS = (0, 180, 90, 270)  # degrees clockwise the page image is turned before reading


class PageTimeout(Exception):
    """One page's OCR ran out of time (``MASIS_OCR_PAGE_TIMEOUT_S``)."""


# A word the engine read and where: (text, left, top, right, bottom), the edges as fractions of
# the page image's width and height, so a preview of any size places it. Kept with the
# document: a scan has no text layer to find a cited passage in (ingest.highlight).
OcrWord = tuple[str, float, float, float, float]
# Pages' words as kept (page: its words; read back from JSON each word is a list).
PageWords = Mapping[int, Sequence[Sequence[Any]]]


@dataclass(frozen=True)
class Line:
    text: str
    confidence: float  # 0..1
    words: tuple[OcrWord, ...] = ()


class Engine(Protocol):
    name: str

    def read(self, image: np.ndarray, dpi: float = OCR_DPI) -> list[Line]:
        """Lines of a grayscale image (rendered at ``dpi``), in reading order."""
        ...

    def orientation(self, image: np.ndarray, dpi: float = OCR_DPI) -> int | None:
        """Degrees to turn the image clockwise to read it, when the engine can tell without
        reading it four times; ``None`` otherwise."""
        ...


@dataclass(frozen=True)
class Reading:
    text: str
    confidence: float
    rotation: int  # degrees the page was turned to read it upright
    words: tuple[OcrWord, ...] = ()  # on the page as stored (not turned), in reading order


class RapidOcrEngine:
    name = "rapidocr"

    def __init__(self) -> None:
        from rapidocr_onnxruntime import RapidOCR

        # One thread: the parent embeds the previous file on the other core meanwhile.
        # Detection on the page shrunk to 1280 px (its boxes still cut the lines from the
        # full image for recognition): 5 s instead of 13 s of CPU on a manual page.
        self._ocr = RapidOCR(
            intra_op_num_threads=1,
            inter_op_num_threads=1,
            det_limit_type="max",
            det_limit_side_len=1280,
        )

    def read(self, image: np.ndarray, dpi: float = OCR_DPI) -> list[Line]:
        # No line classifier: a page's orientation is settled for the whole page instead.
        result, _elapsed = self._ocr(image, use_cls=False)
        return _join_boxes(result or [], image.shape[1], image.shape[0])

    def orientation(self, image: np.ndarray, dpi: float = OCR_DPI) -> int | None:
        return None  # no page-level detector: read_page tries the turns by confidence


# A detected box this much taller than wide is a line of a sideways page. rapidocr turns
# such a crop and reads it, often confidently, but the page's lines then come out in the
# wrong order: its confidence is scaled down so that the page is turned and read again.
TALL_BOX = 1.5
SIDEWAYS_PENALTY = 0.5


def _box_words(text: str, corners: np.ndarray, width: int, height: int) -> list[OcrWord]:
    """A box of several words cut into one box per word, each as wide as its share of the
    box's characters: rapidocr boxes a run of text, not its words."""
    xs, ys = corners[:, 0] / width, corners[:, 1] / height
    left, right = float(xs.min()), float(xs.max())
    top, bottom = float(ys.min()), float(ys.max())
    per_char = (right - left) / max(1, len(text))
    out: list[OcrWord] = []
    end = 0
    for word in text.split():
        start = text.index(word, end)
        end = start + len(word)
        out.append((word, left + start * per_char, top, left + end * per_char, bottom))
    return out


def _join_boxes(result: list[Any], width: int = 1, height: int = 1) -> list[Line]:
    """rapidocr's boxes (top to bottom, then left to right) joined into lines: a box whose
    vertical centre lies within the previous box's height continues that line."""
    lines: list[tuple[list[str], list[float], float, float, list[OcrWord]]] = []
    for box, text, raw_score in result:
        corners = np.asarray(box, dtype=float)
        box_width = float(np.linalg.norm(corners[1] - corners[0]))
        box_height = float(np.linalg.norm(corners[2] - corners[1]))
        tall = len(text) > 1 and box_height > TALL_BOX * box_width
        score = float(raw_score) * (SIDEWAYS_PENALTY if tall else 1.0)
        ys = corners[:, 1]
        top, bottom = float(ys.min()), float(ys.max())
        centre = (top + bottom) / 2
        words = _box_words(text, corners, width, height)
        if lines and lines[-1][2] <= centre <= lines[-1][3]:
            lines[-1][0].append(text)
            lines[-1][1].append(score)
            lines[-1][4].extend(words)
        else:
            lines.append(([text], [score], top, bottom, words))
    return [
        Line(" ".join(texts), float(np.mean(scores)), tuple(words))
        for texts, scores, _, _, words in lines
    ]


class TesseractEngine:
    name = "tesseract"

    def __init__(self) -> None:
        binary = shutil.which("tesseract")
        if binary is None:
            raise RuntimeError("tesseract is not installed (apt-get install tesseract-ocr)")
        self._binary = binary

    def _run(self, image: np.ndarray, dpi: float, *args: str) -> str:
        from PIL import Image

        png = io.BytesIO()
        Image.fromarray(image).save(png, format="PNG", compress_level=1)
        # --dpi: the image's real resolution. Without it tesseract guesses from the text
        # height (it said 160-270 dpi for the manuals' pages at 200).
        proc = subprocess.run(
            [self._binary, "stdin", "stdout", "--dpi", str(round(dpi)), *args],
            input=png.getvalue(),
            capture_output=True,
            check=False,
            # The caller's environment (TESSDATA_PREFIX, a library path) with one thread:
            # the parse child is already one of two workers on two cores.
            env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        )
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.decode(errors="replace").strip()[:200])
        return proc.stdout.decode(errors="replace")

    def read(self, image: np.ndarray, dpi: float = OCR_DPI) -> list[Line]:
        # --psm 3 (automatic layout) cuts a numbered list or a two-part table row into
        # blocks read one after the other ("1 2 3" apart from their items); --psm 4 (one
        # column, lines of any size) keeps each line whole: 0.7% instead of 2.8% normalised
        # CER on 30 manual pages (bench.ocr_quality). It would run two columns' lines
        # together, so a page with a gutter keeps --psm 3.
        psm = "3" if has_columns(image) else "4"
        return _tsv_lines(self._run(image, dpi, "--psm", psm, "-l", "eng", "tsv"))

    def orientation(self, image: np.ndarray, dpi: float = OCR_DPI) -> int | None:
        """Degrees to turn the page clockwise to read it, by tesseract's orientation
        detection (``--psm 0``, osd.traineddata, shipped with tesseract-ocr); ``None`` when
        it finds too few letters to tell. On 40 manual pages turned 0/90/180/270 degrees it
        named every turn right (its "Rotate" is the clockwise correction)."""
        try:
            out = self._run(image, dpi, "--psm", "0")
        except RuntimeError:  # "Too few characters": no answer, not an error
            return None
        fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
        try:
            rotate = int(fields["Rotate"])
        except (KeyError, ValueError):
            return None
        return rotate if rotate in ROTATIONS else None


# A gutter: a run of columns, in the middle half of the text's width, at least this share of
# that width, where at most INK_IN_GUTTER of the inked rows have ink (a heading or a rule
# across the page crosses a gutter), with at least MIN_SIDE_INK of the ink on either side.
GUTTER_WIDTH = 0.02
INK_IN_GUTTER = 0.02
MIN_SIDE_INK = 0.2


def has_columns(image: np.ndarray) -> bool:
    """Whether the page is set in two or more columns side by side (a white gutter down its
    middle), from the image's ink per pixel column."""
    ink = image < 128
    rows = int(np.count_nonzero(ink.any(axis=1)))
    per_column = ink.sum(axis=0)
    inked = np.flatnonzero(per_column)
    if rows == 0 or len(inked) == 0:
        return False
    left, right = int(inked[0]), int(inked[-1]) + 1
    width = right - left
    lo, hi = left + width // 4, right - width // 4
    empty = per_column[lo:hi] <= INK_IN_GUTTER * rows
    total = float(per_column.sum())
    run = 0
    for offset, is_empty in enumerate(empty):
        run = run + 1 if is_empty else 0
        if run >= max(2, GUTTER_WIDTH * width):
            split = lo + offset
            before = float(per_column[:split].sum())
            if min(before, total - before) >= MIN_SIDE_INK * total:
                return True
    return False


def _tsv_word(row: dict[str, str], text: str, size: tuple[float, float]) -> OcrWord:
    """A TSV word row's box as fractions of the page (the level-1 row's size)."""
    left, top = float(row["left"]) / size[0], float(row["top"]) / size[1]
    right = left + float(row["width"]) / size[0]
    return (text, left, top, right, top + float(row["height"]) / size[1])


def _tsv_lines(tsv: str) -> list[Line]:
    """Tesseract's TSV words grouped into lines; a new paragraph starts after a blank line."""
    lines: list[Line] = []
    words: list[OcrWord] = []
    confs: list[float] = []
    key: tuple[str, ...] | None = None
    size = (1.0, 1.0)
    reader = csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE)
    for row in reader:
        if row.get("level") == "1":  # the page: its size in pixels
            size = (max(1.0, float(row["width"])), max(1.0, float(row["height"])))
        text = (row.get("text") or "").strip()
        if row.get("level") != "5" or not text:
            continue
        here = (row["block_num"], row["par_num"], row["line_num"])
        if here != key and words:
            lines.append(_tsv_line(words, confs))
            if key is not None and here[:2] != key[:2]:
                lines.append(Line("", 1.0))
            words, confs = [], []
        key = here
        words.append(_tsv_word(row, text, size))
        confs.append(max(0.0, float(row["conf"])) / 100)
    if words:
        lines.append(_tsv_line(words, confs))
    return lines


def _tsv_line(words: list[OcrWord], confs: list[float]) -> Line:
    return Line(" ".join(w[0] for w in words), float(np.mean(confs)), tuple(words))


def tesseract_available() -> bool:
    return shutil.which("tesseract") is not None


def rapidocr_available() -> bool:
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def resolve(name: EngineName) -> str | None:
    """The engine ``name`` stands for here: ``auto`` is tesseract when installed (faster and
    more accurate, measured), else rapidocr; ``None`` when OCR is off or nothing is there."""
    if name == "off":
        return None
    if name == "auto":
        if tesseract_available():
            return "tesseract"
        return "rapidocr" if rapidocr_available() else None
    available = tesseract_available() if name == "tesseract" else rapidocr_available()
    return name if available else None


def unavailable_reason(name: EngineName) -> str:
    """Why ``resolve(name)`` is ``None``, with the remedy."""
    if name == "off":
        return "OCR is off (MASIS_OCR_ENGINE=off)"
    if name == "tesseract":
        return "the tesseract engine is not installed (apt-get install tesseract-ocr)"
    return (
        "no OCR engine is installed (pip install -r requirements.txt needs Python < 3.13 for "
        "rapidocr-onnxruntime; or apt-get install tesseract-ocr)"
    )


def preload(name: EngineName) -> None:
    """Import the engine's module here, in the parent: a child forked from a threaded server
    must not import (an import lock held by another thread at the fork never opens)."""
    if resolve(name) == "rapidocr":
        import rapidocr_onnxruntime  # noqa: F401


_BUILT: dict[str, Engine] = {}


def make_engine(resolved: str) -> Engine:
    """The engine, built once per process. rapidocr's build loads three ONNX models (seconds
    and tens of MB; docs/measurements/ocr.md): once a file has needed it, the parent builds it too
    (``keep_engine``), and every parse child forked after that inherits it ready."""
    engine = _BUILT.get(resolved)
    if engine is None:
        engine = TesseractEngine() if resolved == "tesseract" else RapidOcrEngine()
        _BUILT[resolved] = engine
    return engine


def keep_engine(resolved: str) -> None:
    """Build ``resolved`` here, in the parent, for the children to come: called after a file
    needed OCR, so a batch without scans never pays for the models. The sessions run on the
    calling thread only (one intra-op thread), so a child forked later has no pool to miss."""
    if resolved not in _BUILT:
        try:
            make_engine(resolved)
        except Exception as exc:  # the child reports a broken install itself
            log.warning("OCR engine %s not kept: %s", resolved, exc)


def _score(lines: list[Line]) -> float:
    """Mean confidence weighted by line length: long confident lines mark an upright page."""
    weights = [len(x.text) for x in lines if x.text]
    if not weights:
        return 0.0
    return float(np.average([x.confidence for x in lines if x.text], weights=weights))


def _turned(image: np.ndarray, rotation: int) -> np.ndarray:
    # np.rot90 turns counter-clockwise; k=-1 turns the image 90 degrees clockwise.
    return np.ascontiguousarray(np.rot90(image, k=-rotation // 90))


def _unturned(word: OcrWord, rotation: int) -> OcrWord:
    """A word's box read on the page turned ``rotation`` degrees clockwise, placed back on
    the page as stored (the preview draws that page, not the turned one)."""
    text, left, top, right, bottom = word
    if rotation == 90:  # a point (x, y) of the page lies at (1 - y, x) on the turned image
        return (text, top, 1 - right, bottom, 1 - left)
    if rotation == 180:
        return (text, 1 - right, 1 - bottom, 1 - left, 1 - top)
    if rotation == 270:  # (x, y) lies at (y, 1 - x)
        return (text, 1 - bottom, left, 1 - top, right)
    return word


def _reading(lines: list[Line], rotation: int) -> Reading:
    words = tuple(_unturned(w, rotation) for x in lines for w in x.words)
    return Reading("\n".join(x.text for x in lines), _score(lines), rotation, words)


def read_page(engine: Engine, image: np.ndarray, dpi: float = OCR_DPI) -> Reading:
    """The page's text, read upright, or in the orientation the engine detects when the
    upright reading is unsure, or else in the turn that gives the most confident reading.

    Confidence alone misleads tesseract: a contents page (dot leaders read as "cee eee")
    reads upright at 0.64 and, turned sideways, at 0.92 out of order; its orientation
    detector settles such pages with one extra call instead of three more readings."""
    lines = engine.read(image, dpi)
    best = _reading(lines, 0)
    if best.confidence >= UPRIGHT_CONFIDENCE:
        return best
    # Asked even when the upright reading found nothing: tesseract's one-column mode finds
    # no line at all on a sideways page.
    detected = engine.orientation(image, dpi)
    if detected == 0:
        return best
    if detected is not None:
        return _reading(engine.read(_turned(image, detected), dpi), detected)
    if not any(x.text for x in lines):
        return best  # nothing that looks like text, in any orientation
    for rotation in ROTATIONS[1:]:
        reading = _reading(engine.read(_turned(image, rotation), dpi), rotation)
        if reading.confidence > best.confidence:
            best = reading
        if best.confidence >= UPRIGHT_CONFIDENCE:
            break
    return best


@dataclass
class Limit:
    """Whether a ``time_limit`` fired: the exception alone cannot say, since a timeout
    raised inside a ctypes call comes back as a ``ctypes.ArgumentError`` that keeps only
    the text "argument 1: PageTimeout:" (seen once in CI, on a 1 ms limit)."""

    fired: bool = False


def timed_out(exc: BaseException | None, limit: Limit | None = None) -> bool:
    """Whether the page ran out of time: ``limit`` fired, or ``exc`` is or wraps a
    ``PageTimeout`` (rapidocr re-raises whatever interrupts a model call as its own
    ``ONNXRuntimeError``)."""
    if limit is not None and limit.fired:
        return True
    while exc is not None:
        if isinstance(exc, PageTimeout):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


@contextmanager
def time_limit(seconds: float, limit: Limit | None = None) -> Iterator[Limit]:
    """Raise ``PageTimeout`` in this (the child's main) thread after ``seconds``, and mark
    ``limit`` fired (made by the caller, so it is bound even when the alarm comes before
    the ``with`` body starts); outside the main thread (a direct call from a worker
    thread) there is no limit but the caller's."""
    limit = limit if limit is not None else Limit()
    if threading.current_thread() is not threading.main_thread():
        yield limit
        return

    def alarm(_signum: int, _frame: FrameType | None) -> None:
        limit.fired = True
        raise PageTimeout

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield limit
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass(frozen=True)
class OcrOptions:
    """What the parse child needs to OCR: picklable, so it crosses the fork as arguments."""

    engine: EngineName = "auto"
    page_timeout_s: float = 120.0
    max_pages: int = 0  # 0: every page that needs it


ProgressFn = Callable[[int, int], None]  # (pages OCRed, pages to OCR)
