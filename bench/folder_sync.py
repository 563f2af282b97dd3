"""Followed folders (issue 56), side by side on one machine, each part on a fresh data dir:

- corpus: a folder of real files (the manuals and the office corpus): plain ingest of the
  files vs the first sync of the folder; a second sync with nothing changed (its share of the
  first); one file changed (files parsed, chunks embedded);
- scale: N small text files (1k, 3k, 10k), each N in its own process: first sync, a second
  unchanged sync, a sync with 1% of the files changed (``--share``), peak memory (the process,
  and its parse children); with ``--seeded``, only the unchanged sync, the file table filled
  as a first sync leaves it (for sizes whose first sync would take hours: 50k);
- storage: a 100-page PDF and a revision changing 3 of its pages: chunks stored for both
  versions against the original alone.

    nice python -m bench.folder_sync [--part all|corpus|scale|storage] [--pdfs DIR]
        [--office DIR] [--limit N] [--sizes 1000,3000,10000] [--share 0.01] [--seeded]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fpdf import FPDF

from ingest.pipeline import Ingestor, Source, expand_paths
from ingest.sync import Syncer, walk
from masis_core.config import Settings
from masis_core.services.access import Door
from masis_core.storage.versions import SyncedFile
from masis_core.workspaces.workbench import Workbench


def bench_on(data: Path) -> Workbench:
    return Workbench(Settings.local(data, provider="offline", calibrate_workspaces=False))


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = call()
    return time.perf_counter() - t, out


def sync_once(bench: Workbench, folder: Path | None = None) -> tuple[float, Any]:
    syncer, door = Syncer(bench), Door(bench)
    if folder is not None:
        bench.create_workspace("w", "wordllama")
        syncer.follow(door, "w", folder)
    return timed(lambda: syncer.sync_as(door, "w"))


# -- corpus -------------------------------------------------------------------------------
def corpus(dirs: list[Path], limit: int, scratch: Path) -> list[dict[str, Any]]:
    folder = scratch / "folder"
    files = [p for p in expand_paths(dirs)][: limit or None]
    for i, p in enumerate(files):
        dest = folder / f"{i:04d}-{p.name}"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dest)
    plain = bench_on(scratch / "plain")
    ws = plain.create_workspace("w", "wordllama")
    sources = [Source.of_path(p) for p in sorted(folder.iterdir())]
    t_plain, reports = timed(lambda: list(Ingestor(plain).ingest_each(ws, sources)))
    synced = bench_on(scratch / "synced")
    t_first, first = sync_once(synced, folder)
    t_again, again = sync_once(synced)
    changed = next(p for p in sorted(folder.iterdir()) if p.suffix in (".md", ".txt", ".html"))
    changed.write_bytes(changed.read_bytes() + b"\n\nA sentence added by the revision.\n")
    t_one, one = sync_once(synced)
    rec = next(r for r in one.files if r.status == "updated")
    chunks = sum(r.chunks for r in reports if r.status == "ingested")
    return [
        {"step": f"plain ingest ({len(files)} files)", "s": t_plain, "note": f"{chunks} chunks"},
        {"step": "first sync", "s": t_first, "note": first.summary()},
        {"step": "second sync, nothing changed", "s": t_again,
         "note": f"{100 * t_again / t_first:.2f}% of the first; {again.summary()}"},
        {"step": f"one file changed ({changed.name})", "s": t_one,
         "note": f"{one.counts['updated']} parsed, {rec.embedded} chunks embedded, "
                 f"{rec.shared} shared"},
    ]  # fmt: skip


# -- scale --------------------------------------------------------------------------------
def small_files(folder: Path, n: int) -> list[Path]:
    """``n`` small text notes, 500 to a subfolder (cheap to parse and embed offline)."""
    out = []
    for i in range(n):
        sub = folder / f"d{i // 500:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        out.append(sub / f"note{i:05d}.txt")
        out[-1].write_text(
            f"Note {i} records the reading of gauge {i % 97} on shift {i % 13}. "
            f"The operator {i % 41} signed it after checking valve {i % 29} and pump {i % 7}.\n"
        )
    return out


def peaks() -> dict[str, float]:
    return {
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "children_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def scale_child(n: int, scratch: Path, share: float) -> dict[str, Any]:
    """First sync, a second one with nothing changed, then one with ``share`` of the files
    changed (a sentence appended to every k-th file)."""
    files = small_files(scratch / "small", n)
    bench = bench_on(scratch / "data")
    t_first, first = sync_once(bench, scratch / "small")
    t_again, _ = sync_once(bench)
    step = max(1, round(1 / share))
    for p in files[::step]:
        p.write_text(p.read_text() + "A later check found the gauge recalibrated.\n")
    t_changed, changed = sync_once(bench)
    embedded = sum(r.embedded for r in changed.files if r.status == "updated")
    return {
        "files": n,
        "first_s": t_first,
        "again_s": t_again,
        "again_share": f"{100 * t_again / t_first:.2f}%",
        "changed_files": len(files[::step]),
        "changed_s": t_changed,
        "changed_embedded": embedded,
        **peaks(),
        "first": first.summary(),
        "changed": changed.summary(),
    }


def seeded_child(n: int, scratch: Path) -> dict[str, Any]:
    """A real sync with nothing changed, of ``n`` files the workspace's file table already
    lists as a first sync leaves them (``synced_files``: path, hash, size); the first sync
    itself is not run. What it measures: the walk, the hashing, the plan, the report."""
    folder = scratch / "small"
    small_files(folder, n)
    bench = bench_on(scratch / "data")
    bench.create_workspace("w", "wordllama")
    syncer, door = Syncer(bench), Door(bench)
    path = str(syncer.follow(door, "w", folder).path)
    found = walk(folder, bench.settings)
    seen = [SyncedFile(path, f.key, f.content_hash, f.content_hash, f.size) for f in found.files]
    syncer.versions.see_files("w", seen)
    t_again, again = sync_once(bench)
    return {"files": n, "again_s": t_again, **peaks(), "again": again.summary()}


def scale(sizes: list[int], share: float, seeded: bool) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        how = ["--seeded"] if seeded else ["--share", str(share)]
        out = subprocess.run(
            [sys.executable, "-m", "bench.folder_sync", "--child", str(n), *how],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)  # kept if a later size is cut
    return rows


# -- storage ------------------------------------------------------------------------------
def report_pdf(changed: set[int]) -> bytes:
    pdf = FPDF()
    pdf.set_auto_page_break(auto=False)
    for page in range(100):
        topic = f"revised{page}" if page in changed else f"subject{page}"
        text = " ".join(
            f"Section {page}.{k}: the {topic} procedure is checked by the {topic} team "
            f"before step {k} and recorded in the {topic} log." for k in range(12)
        )  # fmt: skip
        pdf.add_page()
        pdf.set_font("Helvetica", size=10)
        pdf.set_xy(10, 10)
        pdf.multi_cell(w=190, h=4.5, text=text)
    return bytes(pdf.output())


def storage(scratch: Path) -> list[dict[str, Any]]:
    folder = scratch / "pdf"
    folder.mkdir(parents=True)
    (folder / "report.pdf").write_bytes(report_pdf(set()))
    bench = bench_on(scratch / "data")
    sync_once(bench, folder)
    alone = bench.store.count("wordllama", "w", visible_only=False)
    (folder / "report.pdf").write_bytes(report_pdf({10, 50, 90}))
    _, rep = sync_once(bench)
    both = bench.store.count("wordllama", "w", visible_only=False)
    rec = next(r for r in rep.files if r.status == "updated")
    return [
        {"what": "100-page PDF alone (v1)", "chunks stored": alone, "embedded": alone},
        {"what": "v1 + revision of 3 pages (v2)", "chunks stored": both,
         "embedded": rec.embedded, "extra": f"{100 * (both - alone) / alone:.1f}%"},
    ]  # fmt: skip


def table(rows: list[dict[str, Any]]) -> str:
    cols = list(dict.fromkeys(c for r in rows for c in r))
    fmt = [
        [f"{r.get(c, ''):.2f}" if isinstance(r.get(c), float) else str(r.get(c, "")) for c in cols]
        for r in rows
    ]
    widths = [max(len(c), *(len(f[i]) for f in fmt)) for i, c in enumerate(cols)]
    line = " | ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))
    body = [" | ".join(v.ljust(w) for v, w in zip(f, widths, strict=True)) for f in fmt]
    return "\n".join([line, "-+-".join("-" * w for w in widths), *body])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--part", default="all", choices=["all", "corpus", "scale", "storage"])
    ap.add_argument("--pdfs", type=Path, default=Path("/work/main/.pdf-corpus/manuals"))
    ap.add_argument("--office", type=Path, default=Path("/work/main/.office-corpus"))
    ap.add_argument("--limit", type=int, default=0, help="files of the corpus at most (0: all)")
    ap.add_argument("--sizes", default="1000,3000,10000")
    ap.add_argument("--share", type=float, default=0.01, help="files changed in the last sync")
    ap.add_argument(
        "--seeded",
        action="store_true",
        help="scale: only the unchanged sync, the file table seeded (no first sync)",
    )
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="folder-sync-") as tmp:
        scratch = Path(tmp)
        if args.child:
            child = seeded_child(args.child, scratch) if args.seeded else None
            print(json.dumps(child or scale_child(args.child, scratch, args.share)))
            return
        if args.part in ("all", "storage"):
            print("storage: a 100-page PDF and a 3-page revision\n" + table(storage(scratch / "s")))
        if args.part in ("all", "scale"):
            sizes = [int(n) for n in args.sizes.split(",")]
            rows = scale(sizes, args.share, args.seeded)
            print("\nscale: small text files\n" + table(rows))
        if args.part in ("all", "corpus"):
            rows = corpus([args.pdfs, args.office], args.limit, scratch / "c")
            print("\ncorpus: plain ingest vs sync\n" + table(rows))


if __name__ == "__main__":
    main()
