"""Page previews of untrusted PDFs: rendered in a child process, at most 20 megapixels, within
a time limit; anything else is ``None`` with a logged reason, never an exception."""

from __future__ import annotations

import logging
import math
import multiprocessing
import os
import signal
import struct
import threading
from pathlib import Path

import pytest
from fpdf import FPDF

from ingest import isolate
from ingest.isolate import render_pdf_page
from ingest.parsing import MAX_PREVIEW_PIXELS, preview_scale
from tests.pdfs import filler, make_pdf

TIMEOUT_S = 60.0  # generous: the limit under test is the pixel cap, not the clock


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from the PNG signature and IHDR chunk."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


@pytest.fixture(scope="module")
def extreme(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Page 1 is 3 x 14,400 pt: at 900 px wide that is a 10.9 GiB bitmap. Page 2 is A4."""
    pdf = FPDF(unit="pt", format=(3, 14400))
    pdf.add_page()
    pdf.set_font("Helvetica", size=2)
    pdf.text(0.5, 100, "x")
    pdf.add_page(format="A4")
    pdf.set_font("Helvetica", size=10)
    pdf.text(50, 50, "an ordinary page")
    path = tmp_path_factory.mktemp("pdf") / "extreme.pdf"
    path.write_bytes(bytes(pdf.output()))
    return path


def test_an_extreme_page_is_rendered_under_the_pixel_cap(extreme: Path) -> None:
    png = render_pdf_page(extreme, 1, TIMEOUT_S)
    assert png is not None
    width, height = png_size(png)
    assert width * height <= MAX_PREVIEW_PIXELS
    assert height > 100 * width  # the page's shape is kept


def test_an_ordinary_page_keeps_the_requested_width(extreme: Path) -> None:
    png = render_pdf_page(extreme, 2, TIMEOUT_S)
    assert png is not None
    assert png_size(png) == (900, 1273)  # A4 is 595.28 x 841.89 pt


@pytest.mark.parametrize(
    ("size", "width_px"), [((3, 14400), 900), ((14400, 14400), 900), ((1, 1), 5000)]
)
def test_the_scale_respects_the_cap_after_pdfium_rounds_up(size, width_px) -> None:
    scale = preview_scale(*size, width_px)
    pixels = math.ceil(size[0] * scale) * math.ceil(size[1] * scale)
    assert pixels <= MAX_PREVIEW_PIXELS
    # As large as allowed: the cap nearly reached, or the requested width.
    assert pixels > MAX_PREVIEW_PIXELS * 0.99 or round(size[0] * scale) == width_px


def test_the_render_runs_in_a_child_process(extreme: Path, monkeypatch) -> None:
    monkeypatch.setattr(isolate, "render_page_png", lambda *_a: str(os.getpid()).encode())
    pid = render_pdf_page(extreme, 2, TIMEOUT_S)
    assert pid is not None and int(pid) != os.getpid()


def test_a_render_past_the_time_limit_is_dropped_and_its_child_killed(
    extreme: Path, monkeypatch, caplog
) -> None:
    monkeypatch.setattr(isolate, "render_page_png", lambda *_a: threading.Event().wait())
    with caplog.at_level(logging.WARNING, logger="ingest.isolate"):
        assert render_pdf_page(extreme, 2, timeout_s=0.3) is None
    assert "rendering took longer than 0.3 s (MASIS_PREVIEW_TIMEOUT_S)" in caplog.text
    assert multiprocessing.active_children() == []


def test_a_crashing_renderer_gives_no_preview(extreme: Path, monkeypatch, caplog) -> None:
    monkeypatch.setattr(
        isolate, "render_page_png", lambda *_a: os.kill(os.getpid(), signal.SIGKILL)
    )
    with caplog.at_level(logging.WARNING, logger="ingest.isolate"):
        assert render_pdf_page(extreme, 2, TIMEOUT_S) is None
    assert f"the renderer crashed (exit code -{int(signal.SIGKILL)})" in caplog.text


def test_no_preview_for_text_files_missing_pages_or_broken_pdfs(tmp_path: Path) -> None:
    note = tmp_path / "note"
    note.write_text(filler("pump", 50))
    broken = tmp_path / "broken"
    broken.write_bytes(b"%PDF-1.7\n" + os.urandom(300))
    short = tmp_path / "short"
    short.write_bytes(make_pdf([filler("valve", 20)]))
    assert render_pdf_page(note, 1, TIMEOUT_S) is None
    assert render_pdf_page(broken, 1, TIMEOUT_S) is None
    assert render_pdf_page(short, 2, TIMEOUT_S) is None
    assert render_pdf_page(tmp_path / "gone", 1, TIMEOUT_S) is None
    assert render_pdf_page(short, 1, TIMEOUT_S) is not None
