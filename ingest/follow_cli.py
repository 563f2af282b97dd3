"""``python -m ingest --workspace W --follow DIR | --unfollow DIR | --sync [--json]``: the
command line of followed folders (ingest/sync.py). Exit status: 0 when every file synced, 1
when a file or a folder failed (the others are still synced), 2 when nothing could start."""

from __future__ import annotations

import argparse
import json
import sys

from ingest.sync import Syncer, SyncReport
from masis_core.errors import MasisError
from masis_core.services.access import Door
from masis_core.storage.registry import Workspace
from masis_core.workspaces.workbench import Workbench


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("followed folders (docs/folder-sync.md)")
    group.add_argument("--follow", metavar="DIR", help="follow a folder (then --sync)")
    group.add_argument("--unfollow", metavar="DIR", help="stop following a folder")
    group.add_argument("--sync", action="store_true", help="sync the followed folders now")
    group.add_argument(
        "--every",
        type=int,
        metavar="MINUTES",
        help="with --follow: the UI's job runner syncs the workspace every MINUTES (0: never)",
    )


def wanted(args: argparse.Namespace) -> bool:
    return bool(args.follow or args.unfollow or args.sync)


def run(bench: Workbench, door: Door, ws: Workspace, args: argparse.Namespace) -> int:
    """Follow, unfollow, then sync, as asked."""
    syncer = Syncer(bench)
    try:
        if args.follow:
            folder = syncer.follow(door, ws.id, args.follow)
            if args.every:
                syncer.versions.set_schedule(ws.id, folder.path, args.every)
            if not args.json:
                print(f"workspace {ws.id} follows {folder.path}")
        if args.unfollow:
            syncer.unfollow(door, ws.id, args.unfollow)
            if not args.json:
                print(f"workspace {ws.id} no longer follows {args.unfollow}")
        if not args.sync:
            if args.json:
                folders = [f.path for f in syncer.versions.folders(ws.id)]
                print(json.dumps({"workspace": ws.id, "folders": folders}, indent=2))
            return 0
        report = syncer.sync_as(door, ws.id, on_file=None if args.json else _line)
    except MasisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_report(report, args.json)
    return 1 if report.counts["failed"] else 0


def _line(name: str, stage: str) -> None:
    if stage in ("hashed", "parsing", "embedding", "storing", "publishing", "OCR pages"):
        return
    print(f"{stage:<10} {name}", file=sys.stderr, flush=True)


def print_report(report: SyncReport, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report.to_json(), indent=2))
        return
    for rec in report.files:
        if rec.status not in ("unchanged",):
            print(rec.line())
    for folder in report.folders:
        if folder.get("error"):
            print(f"failed     {folder['folder']}: {folder['error']}")
    print(f"workspace {report.workspace}: {report.summary()}")
