"""``python -m ingest --workspace W [--embedder ...] PATH... [--json]``, or
``python -m ingest --workspace W --list [--json]`` for the documents already there, or
``python -m ingest --workspace W --follow DIR | --unfollow DIR | --sync`` (ingest/follow_cli.py).

Exit status: 0 when every file is ingested or a duplicate, 1 when any file failed (the others
are still ingested), 2 when nothing could start (bad workspace, embedder, arguments).
"""

from __future__ import annotations

import argparse
import getpass
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from ingest import follow_cli
from ingest.pipeline import (
    Added,
    FileReport,
    Ingestor,
    Progress,
    Source,
    expand_paths,
    shown_pages,
)
from masis_core.cli import setup_logging
from masis_core.errors import MasisError, WorkspaceError
from masis_core.services.access import Door
from masis_core.services.identity import cli_principal
from masis_core.storage.registry import Document, Workspace
from masis_core.workspaces.workbench import Workbench


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ingest",
        description="Ingest PDFs, Word, PowerPoint, Excel, CSV, HTML, EPUB, e-mail, .txt and .md "
        "files (or folders of them) into a workspace.",
    )
    parser.add_argument("--workspace", "-w", required=True, help="workspace id (created if new)")
    parser.add_argument(
        "--embedder",
        default="auto",
        help="auto | wordllama | ollama:nomic-embed-text (fixed when the workspace is created)",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    parser.add_argument(
        "--list", action="store_true", help="list the workspace's documents instead of ingesting"
    )
    parser.add_argument(
        "--no-calibrate",
        action="store_true",
        help="do not fit the confidence to the documents after ingesting (as the Library does); "
        "python -m masis_core calibrate does it later",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--verbose", "-v", action="store_true")
    parser.add_argument(
        "--user",
        help="act as this account (MASIS_AUTH=local): asks its password, or MASIS_PASSWORD",
    )
    parser.add_argument("--token", help="act as a personal token's account (or MASIS_TOKEN)")
    follow_cli.add_arguments(parser)
    return parser


def totals(reports: list[FileReport]) -> dict[str, int]:
    out = {"files": len(reports), "ingested": 0, "duplicate": 0, "failed": 0, "chunks": 0}
    for r in reports:
        out[r.status] += 1
        out["chunks"] += r.chunks if r.status == "ingested" else 0
    return out


def document_line(doc: Document) -> str:
    """'manual.pdf: 40 pages, 120 chunks, 3 read by OCR (pages 1, 2, 3)'."""
    ocr = (
        f", {len(doc.ocr_pages)} read by OCR ({shown_pages(doc.ocr_pages)})"
        if doc.ocr_pages
        else ""
    )
    return f"{doc.filename}: {doc.pages} pages, {doc.chunks} chunks{ocr}"


def list_documents(bench: Workbench, ws: Workspace, as_json: bool) -> int:
    docs = bench.documents(ws.id)
    if as_json:
        rows = [
            {k: getattr(d, k) for k in ("filename", "doc_id", "pages", "chunks", "ocr_pages")}
            for d in docs
        ]
        print(json.dumps({"workspace": ws.id, "documents": rows}, indent=2))
        return 0
    for doc in docs:
        print(document_line(doc))
    print(f"workspace {ws.id} ({ws.embed_model}): {len(docs)} documents")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if follow_cli.wanted(args) and (args.paths or args.list):
        parser.error("--follow, --unfollow and --sync take no PATHs and no --list")
    if not args.paths and not args.list and not follow_cli.wanted(args):
        parser.error("give the PATHs to ingest, or --list, or --follow DIR / --sync")
    if args.paths and args.list:
        parser.error("--list shows what is there; give it without PATHs")
    setup_logging(args.verbose)
    try:
        bench = Workbench()
        gate = Door(bench, cli_principal(bench, args.user, args.token, getpass.getpass))
        # Listing a workspace that is not there must not make it (a typo would), nor may an
        # unfollow or a sync.
        create = not args.list and not (follow_cli.wanted(args) and not args.follow)
        ws = open_for(gate, args, create)
        ingestor = Ingestor(bench)
        ingestor.sweep_stale()
    except MasisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if follow_cli.wanted(args):
        return follow_cli.run(bench, gate, ws, args)
    if args.list:
        return list_documents(bench, ws, args.json)

    files = expand_paths(args.paths)
    if not files:
        print("error: no file of a kind the Library reads under the given paths", file=sys.stderr)
        return 2
    gate.audit("document.upload", ws.id, f"{len(files)} files (python -m ingest)")
    reports = ingest_files(ingestor, ws, files, args.json, gate.added(ws.id))
    summary = totals(reports)
    calibration = None
    if summary["ingested"] and not args.no_calibrate and bench.settings.calibrate_workspaces:
        calibration = calibrate(bench, ws, args.json)
    print_summary(ws, reports, summary, args.json, calibration)
    return 1 if summary["failed"] else 0


def open_for(gate: Door, args: argparse.Namespace, create: bool) -> Workspace:
    """The workspace as the command's account may use it: listing needs viewer, adding
    editor; a workspace it cannot see is made anew as its own (a name another account's
    hidden workspace holds gets an id of its own). The local user (``MASIS_AUTH=none``): as
    before, any workspace. Listing one that is not there must not make it (a typo would)."""
    bench = gate.bench
    if gate.who.local:
        return bench.open_workspace(args.workspace, args.embedder, create=create)
    try:
        ws = gate.workspace(args.workspace, "read" if args.list else "upload")
    except WorkspaceError:
        if not create:
            raise
        ws = gate.create_workspace(args.workspace, args.embedder)
        print(f"created workspace {ws.id} ({ws.embed_model})", file=sys.stderr)
        return ws
    return bench.open_workspace(ws.id, args.embedder, create=False)


def calibrate(bench: Workbench, ws: Workspace, as_json: bool) -> dict[str, Any]:
    """What the Library queues after a batch that added documents, run here in line: the
    confidence fitted to the workspace's outline questions. A command-line batch had left the
    global model in place, answering far fewer questions without review
    (docs/measurements/calibration.md), unless the analyst read the hint and ran
    ``calibrate``. Ctrl-C skips it and stores nothing."""
    from evaluation.calibration import calibrate_workspace

    def progress(done: int, total: int, what: str) -> None:
        print(f"calibration: {what} {done}/{total}", file=sys.stderr, flush=True)

    if not as_json:
        print(
            "fitting the confidence to these documents (Ctrl-C skips it; "
            f"python -m masis_core calibrate --workspace {ws.id} does it later)",
            file=sys.stderr,
            flush=True,
        )
    # Ctrl-C asks the job to stop before its next question, as the Inspector's cancel does: a
    # KeyboardInterrupt raised inside a graph run could be swallowed there, and the fit went on.
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        report = calibrate_workspace(
            bench, ws.id, cancelled=stop.is_set, progress=None if as_json else progress
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    if report["status"] in ("cancelled", "deleted"):
        report["message"] = f"calibration {report['status']}, nothing stored"
    return {k: report.get(k) for k in ("status", "message", "ece_before", "ece_after")}


def ingest_files(
    ingestor: Ingestor,
    ws: Workspace,
    files: list[Path],
    as_json: bool,
    added: Added | None = None,
) -> list[FileReport]:
    """Each file in turn, with a progress bar on a terminal (a line per file otherwise,
    unless the output is JSON); ``added``: each new document's audit row."""
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=len(files), unit="file", file=sys.stderr, dynamic_ncols=True)
    reports: list[FileReport] = []

    def on_start(_i: int, source: Source) -> Progress | None:
        if bar is None:
            return None
        bar.set_description(source.name[:40])
        bar.set_postfix_str("")
        return lambda stage, done, total: bar.set_postfix_str(f"{stage} {done}/{total}")

    sources = [Source.of_path(p) for p in files]
    for report in ingestor.ingest_each(ws, sources, on_start, added=added):
        reports.append(report)
        if bar is not None:
            bar.update(1)
            bar.write(report.line(), file=sys.stderr)
        elif not as_json:
            print(report.line(), flush=True)
    if bar is not None:
        bar.close()
    return reports


def print_summary(
    ws: Workspace,
    reports: list[FileReport],
    summary: dict[str, int],
    as_json: bool,
    calibration: dict[str, Any] | None = None,
) -> None:
    if as_json:
        doc = {
            "workspace": ws.id,
            "embedder": ws.embed_model,
            "files": [r.to_json() for r in reports],
            "totals": summary,
            "calibration": calibration,
        }
        print(json.dumps(doc, indent=2))
        return
    print(
        f"workspace {ws.id} ({ws.embed_model}): {summary['ingested']} ingested, "
        f"{summary['duplicate']} duplicate, {summary['failed']} failed, "
        f"{summary['chunks']} chunks added"
    )
    if calibration is not None:
        print(f"confidence: {calibration['message']}")
    if summary["ingested"] and (calibration is None or calibration["status"] != "fitted"):
        too_few = calibration is not None and calibration["status"] in ("too_few", "one_sided")
        print(
            "the confidence is not fitted to these documents: run "
            f"python -m masis_core calibrate --workspace {ws.id}"
            + (" once the workspace has more documents" if too_few else "")
        )


if __name__ == "__main__":
    sys.exit(main())
