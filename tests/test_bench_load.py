"""The ingest benchmark prints the machine's load beside every figure: its ratio to the
LangChain pipeline swung from 3.3x to 6.0x between runs with what else the machine ran
(issue 54, point 13)."""

from __future__ import annotations

import re
from pathlib import Path

from bench import ingest_speed


def _result(wall: float, load: list[float], **extra: object) -> dict[str, object]:
    return {"wall_s": wall, "pages": 100, "chunks": 300, "peak_mb": 400.0, "load": load, **extra}


def test_every_figure_of_the_ingest_benchmark_is_printed_with_the_machine_load() -> None:
    limit = _result(
        2.0,
        [0.4, 0.4],
        extract_s=1.0,
        embed_s=0.5,
        store_s=0.5,
        ocr_s=3.0,
        ocr_pages=2,
        ocr_engine="rapidocr",
    )
    results = {
        "ours": _result(2.5, [1.92, 2.41]),
        "baseline": _result(9.0, [3.0, 3.04]),
        "limit": limit,
    }
    lines = ingest_speed.report(results, 3, Path("manuals"))
    figures = [line for line in lines if re.search(r"\d+\.\d+", line)]
    assert len(figures) >= 7  # the head, three variants, OCR alone, limit, speed-up, efficiency
    for line in figures:
        assert "load" in line, line
    assert "load 1.9–2.4" in next(line for line in lines if line.startswith("ours"))
    assert "load 3.0" in next(line for line in lines if line.startswith("baseline"))
    speed_up = next(line for line in lines if "speed-up" in line)
    assert "ours load 1.9–2.4" in speed_up and "baseline load 3.0" in speed_up
