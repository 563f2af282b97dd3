"""``python -m masis_core ask | resume | status | eval | calibrate | users`` — the same engine
as the UI, acting as an account when ``MASIS_AUTH`` is not ``none`` (``--user`` / ``--token``).

Exit status: 0 completed (or paused for review: the JSON says which), 1 failed, 2 bad usage
(and a refused sign-in or access).
"""

from __future__ import annotations

import argparse
import functools
import getpass
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from masis_core.cli import bounded_int, setup_logging, share
from masis_core.errors import AccessError, InputError, MasisError
from masis_core.modes import MODES
from masis_core.policy import POLICY
from masis_core.retrieval.vocabulary import language_notice
from masis_core.services.access import Door
from masis_core.services.identity import cli_principal
from masis_core.services.reports import citation_source, cited_by
from masis_core.services.runs import RunRecord
from masis_core.storage.accounts import Accounts, Principal
from masis_core.text.markup import percent
from masis_core.workspaces.workbench import Workbench

# ``sub.add_parser`` with the shared options bound: how every subcommand is registered.
AddCommand = Callable[..., argparse.ArgumentParser]


def node_line(entry: dict[str, Any]) -> str:
    """The console trace: one line per node as it finishes."""
    node = entry.get("node", "?")
    skip = {"node", "alternatives", "strategy"}
    fields = " ".join(
        f"{k}={v}"
        for k, v in entry.items()
        if k not in skip and not k.startswith("scores_") and v not in (None, [], "")
    )
    return f"[{node:>12}] {fields}"


def print_record(rec: RunRecord) -> None:
    print()
    print(f"run {rec.run_id}: {rec.status}")
    if rec.error:
        print(f"error: {rec.error}")
    notice = language_notice(rec.trace)
    if notice:
        print(f"note: {notice}")
    if rec.answer:
        print()
        print(rec.answer)
        print()
        cited = cited_by(rec)
        for c in rec.citations:
            print(f"  [{c['n']}] {citation_source(c, cited.get(c['n'], ()))}")
        if rec.confidence is not None:
            print(f"\nconfidence: {percent(rec.confidence)}")
    if rec.hitl:
        print()
        print(f"needs your review ({rec.hitl.get('kind')}): {rec.hitl.get('message')}")
        print(f"options: {', '.join(rec.hitl.get('options', []))}")
        passages = (rec.hitl.get("details") or {}).get("passages") or []
        for n, text in enumerate(passages, start=1):
            print(f"  also relevant {n}: {text}")
        if passages:
            print(
                "to accept it leading with one of those instead: "
                '--response \'{"action": "accept", "lead": N}\''
            )
        print(
            f"resume with: python -m masis_core resume {rec.run_id} "
            '--response \'{"action": "rephrase", "text": "..."}\''
        )


def run_json(rec: RunRecord) -> dict[str, Any]:
    data, cited = rec.to_json(), cited_by(rec)
    return {
        "run_id": data["run_id"],
        "status": data["status"],
        "question": data["question"],
        "engine": data["engine"],
        "answer": data["answer"],
        "citations": [
            {
                **{
                    k: c.get(k)
                    for k in ("n", "chunk_id", "doc_id", "filename", "page", "place", "url")
                },
                "source": citation_source(c, cited.get(c["n"], ())),  # as the page cites it
            }
            for c in data["citations"]
        ],
        "confidence": data["confidence"],
        "hitl": data["hitl"],
        "metrics": data["metrics"],
        "trace": data["trace"],
        "error": data["error"],
        "thread": rec.thread_id,
        "follow_up": data["follow_up"],
    }


def finish(rec: RunRecord, as_json: bool, extra: dict[str, Any] | None = None) -> int:
    if as_json:
        print(json.dumps({**run_json(rec), **(extra or {})}, indent=2, default=str))
    else:
        print_record(rec)
    return 1 if rec.status == "failed" else 0


def door(args: argparse.Namespace, bench: Workbench | None = None) -> Door:
    """The workbench as the account the command acts as (``--user`` / ``--token``)."""
    bench = bench or Workbench()
    who = cli_principal(bench, args.user, args.token, getpass.getpass)
    return Door(bench, who)


def answered_by_diff(gate: Door, args: argparse.Namespace) -> int | None:
    """'compare v2 and v3 of report.pdf', 'what changed in the travel policy?': the diff of
    the two versions, with Ollama under the model's short summary of it
    (docs/folder-sync.md); None for any other question."""
    from ingest.versioning import answer_comparison  # the entry point reaches every layer
    from masis_core.answers.change_summary import summarise

    ws = gate.workspace(args.workspace, "ask")
    diff = None if args.thread else answer_comparison(gate.bench, ws, args.question)
    if diff is None:
        return None
    summary = summarise(gate.bench.settings, diff, gate.bench.provider_status())
    answer = "\n".join([*summary.lines(), *diff.lines()])
    if args.json:
        doc = {"status": "completed", "answer": answer, "summary": summary, "comparison": diff}
        print(json.dumps(doc, indent=2, default=lambda o: getattr(o, "__dict__", str(o))))
    else:
        print(answer)
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    gate = door(args)
    compared = answered_by_diff(gate, args)
    if compared is not None:
        return compared
    bench, researcher = gate.bench, gate.runs_service
    web_ready, web_reason = bench.web_status()
    if args.web and not web_ready:
        print(f"note: web search is off. {web_reason}", file=sys.stderr)
    on_event = None if args.json else lambda kind, e: kind == "node" and print(node_line(e))
    question, rewrite = args.question, None
    if args.thread and not gate.who.local:  # (the local user: start's own message, as before)
        gate.require_run(args.thread)
    if args.thread and not args.no_rewrite:  # (start checks the thread either way)
        rewrite = researcher.rewrite(args.thread, question)
        question = rewrite.question
        if not args.json:
            print(f"standalone question: {question}\n({rewrite.note()})", file=sys.stderr)
    rec = gate.ask(
        args.workspace,
        question,
        web=args.web,
        max_retries=args.max_retries,
        mode=args.mode,
        on_event=on_event,
        thread=args.thread,
        follow_up=args.question if args.thread else None,
    )
    extra = {"rewrite": {"method": rewrite.method, "error": rewrite.error}} if rewrite else {}
    return finish(rec, args.json, extra)


def cmd_resume(args: argparse.Namespace) -> int:
    try:
        response = json.loads(args.response) if args.response else None
    except json.JSONDecodeError as exc:
        raise InputError(f"--response is not valid JSON: {exc}") from exc
    gate = door(args)
    on_event = None if args.json else lambda kind, e: kind == "node" and print(node_line(e))
    return finish(gate.resume(args.run_id, response, on_event=on_event), args.json)


def cmd_status(args: argparse.Namespace) -> int:
    gate = door(args)
    bench = gate.bench
    status = bench.provider_status()
    runs = gate.recent_runs(20)
    data: dict[str, Any] = {
        "mode": status.mode,
        "label": status.label,
        "ready": status.ready,
        "reason": status.reason,
        "ollama": {
            "host": bench.settings.ollama_host,
            "reachable": bool(status.ollama and status.ollama.reachable),
            "models": status.ollama.models if status.ollama else [],
        },
        "enable_ollama": status.enable_commands if status.mode == "offline" else [],
        "data_dir": str(bench.settings.data_dir),
        # Where the shared state lives: in server mode not in the data dir.
        "database": bench.db.describe(),
        "vectors": (
            f"Chroma server {bench.settings.chroma_host}:{bench.settings.chroma_port}"
            if bench.settings.chroma_host
            else str(bench.settings.chroma_dir)
        ),
        "workspaces": [
            {"id": ws.id, "embed_model": ws.embed_model, "documents": len(bench.documents(ws.id))}
            for ws in gate.workspaces()
        ],
        "recent_runs": [
            {
                "run_id": r.run_id,
                "workspace": r.workspace_id,
                "status": r.status,
                "question": r.question,
            }
            for r in runs
        ],
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"mode: {data['label']}{'' if status.ready else ' (not usable)'}")
    print(f"why:  {status.reason}")
    for cmd in data["enable_ollama"]:
        print(f"      to enable Ollama: {cmd}")
    print(f"data: {data['data_dir']}")
    print(f"rows: {data['database']}")
    print(f"vectors: {data['vectors']}")
    for ws in data["workspaces"]:
        print(f"workspace {ws['id']}: {ws['documents']} documents ({ws['embed_model']})")
    for r in data["recent_runs"]:
        print(f"run {r['run_id']} [{r['status']}] {r['workspace']}: {r['question'][:70]}")
    return 0


def _stderr_progress(args: argparse.Namespace):
    return None if args.json else (lambda msg: print(msg, file=sys.stderr))


def cmd_eval(args: argparse.Namespace) -> int:
    from evaluation import governance
    from evaluation import retrieval as evaluate

    if args.kind == "retrieval":
        if not args.dataset:
            raise InputError("eval retrieval needs --dataset DIR (a BEIR layout)")
        report = evaluate.evaluate_retrieval(
            Path(args.dataset),
            modes=[args.mode] if args.mode else MODES,
            k=args.k or 10,
            use_variants=not args.no_variants,
            limit=args.limit,
            progress=_stderr_progress(args),
        )
        text = evaluate.format_table(report)
    elif args.kind == "outline":
        return _eval_outline(args)
    elif args.kind == "pages":
        if not (args.pdfs and args.questions):
            raise InputError("eval pages needs --pdfs DIR and --questions FILE")
        report = evaluate.evaluate_pages(
            Path(args.pdfs),
            Path(args.questions),
            k=args.k or 5,
            mode=args.mode or "hybrid",
            progress=_stderr_progress(args),
        )
        text = evaluate.format_pages(report)
    else:
        if not args.cases:
            raise InputError("eval governance needs --cases FILE")
        report = governance.run_governance(
            Path(args.cases),
            limit=args.limit,
            engine=args.engine,
            progress=None if args.json else sys.stderr,
            workers=args.workers,
        )
        text = governance.format_report(report)
        if report["errors"]["count"] == report["cases"]:  # nothing was measured
            print(json.dumps(report, indent=2) if args.json else text)
            return 1
    print(json.dumps(report, indent=2) if args.json else text)
    return 0


def _eval_outline(args: argparse.Namespace) -> int:
    """Questions from the workspace's own PDF outlines (or ``--questions``), every mode."""
    from evaluation import outline

    if not args.workspace:
        raise InputError("eval outline needs --workspace W (a workspace of this data dir)")
    questions = None
    if args.questions:
        path = Path(args.questions)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read the question file {path}: {exc}") from exc
        questions = outline.load_question_file(path.name, data)
    progress = _stderr_progress(args)
    gate = door(args)
    report = outline.run_evaluation(
        gate.bench,
        gate.start_task(args.workspace, "evaluate").id,
        k=args.k or 5,
        questions=questions,
        per_doc=args.per_doc,
        modes=[args.mode] if args.mode else None,
        progress=None if progress is None else lambda d, t, what: progress(f"{what} {d}/{t}"),
    )
    summary = outline.summary_json(report)
    print(json.dumps(summary, indent=2) if args.json else outline.format_summary(report))
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Without ``--questions``: the workspace's confidence, fitted on its outline questions and
    the analyst's verdicts. With it: the retrieval threshold, from a question file."""
    gate = door(args)
    ws_id = gate.start_task(args.workspace, "calibrate").id
    if args.questions is None:
        from evaluation import calibration

        progress = _stderr_progress(args)
        report = calibration.calibrate_workspace(
            gate.bench,
            ws_id,
            progress=None if progress is None else lambda d, t, what: progress(f"{what} {d}/{t}"),
            limit=args.max_questions,
        )
        print(json.dumps(report, indent=2) if args.json else calibration.format_report(report))
        return 0
    from evaluation import retrieval as evaluate

    report = evaluate.calibrate(gate.bench, ws_id, Path(args.questions), keep=args.keep)
    print(json.dumps(report, indent=2) if args.json else evaluate.format_calibration(report))
    return 0


def add_calibrate(add: AddCommand) -> None:
    """``calibrate``: the workspace's confidence, or with ``--questions`` its threshold."""
    cal = add(
        "calibrate",
        help="fit the workspace's confidence to its outline questions and your verdicts; "
        "with --questions: the retrieval threshold from relevant vs irrelevant chunks",
    )
    cal.add_argument("--workspace", "-w", required=True)
    cal.add_argument(
        "--questions", help="threshold: JSON list of {doc, question, gold_page}", default=None
    )
    cal.add_argument(
        "--keep", type=share, default=0.85, help="threshold: share of relevant chunks to keep"
    )
    cal.add_argument(
        "--max-questions",
        type=bounded_int(1),
        default=60,
        help="confidence: outline questions asked",
    )
    cal.add_argument("--json", action="store_true")
    cal.set_defaults(func=cmd_calibrate)


def add_eval(add: AddCommand) -> None:
    """``eval governance | retrieval | pages | outline``."""
    ev = add("eval", help="evaluate on development data")
    ev.add_argument("kind", choices=["governance", "retrieval", "pages", "outline"])
    ev.add_argument("--workspace", "-w", help="outline: the workspace to evaluate")
    ev.add_argument(
        "--per-doc", type=bounded_int(1), default=20, help="outline: questions per document"
    )
    ev.add_argument("--cases", help="governance: the cases file (JSON lines)")
    ev.add_argument("--dataset", help="retrieval: a BEIR-layout folder")
    ev.add_argument("--pdfs", help="pages: a folder of PDFs")
    ev.add_argument(
        "--questions",
        help="pages: JSON list of {doc, question, gold_page}; outline: the same as JSON or CSV",
    )
    ev.add_argument("--mode", choices=MODES, default=None)
    ev.add_argument(
        "--k", type=bounded_int(1), default=None, help="cut-off (retrieval 10, pages 5)"
    )
    ev.add_argument("--no-variants", action="store_true", help="retrieval: question only")
    ev.add_argument(
        "--limit", type=bounded_int(1), default=None, help="governance, retrieval: cases asked"
    )
    ev.add_argument("--engine", choices=["offline", "ollama"], default="offline")
    ev.add_argument(
        "--workers",
        type=bounded_int(1),
        default=None,
        help="governance: processes (default: cores, ≤ 2)",
    )
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(func=cmd_eval)


def add_runs(add: AddCommand) -> None:
    """``ask``, ``resume``, ``status``: the research runs."""
    ask = add("ask", help="ask a question of a workspace")
    ask.add_argument("--workspace", "-w", required=True)
    ask.add_argument("question")
    ask.add_argument("--web", action="store_true", help="also search the web (needs Tavily)")
    ask.add_argument(
        "--max-retries",
        type=bounded_int(0, POLICY.max_retries_limit),
        default=None,
        help=(
            f"retries before the run asks you (0 to {POLICY.max_retries_limit}; "
            f"default {POLICY.default_max_retries})"
        ),
    )
    ask.add_argument("--mode", choices=MODES, default=None, help="retrieval mode")
    ask.add_argument(
        "--thread",
        metavar="RUN_ID",
        help="a follow-up to that run: made standalone from the thread, then asked",
    )
    ask.add_argument(
        "--no-rewrite", action="store_true", help="with --thread: ask the follow-up as typed"
    )
    ask.add_argument("--json", action="store_true")
    ask.set_defaults(func=cmd_ask)
    resume = add("resume", help="answer a paused run's review, or retry a failed run")
    resume.add_argument("run_id")
    resume.add_argument("--response", help='e.g. {"action": "rephrase", "text": "..."}')
    resume.add_argument("--json", action="store_true")
    resume.set_defaults(func=cmd_resume)
    status = add("status", help="active mode, workspaces, recent runs")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=cmd_status)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m masis_core")
    parser.add_argument("--verbose", "-v", action="store_true")
    parser.add_argument(
        "--user",
        help="act as this account (MASIS_AUTH=local): asks its password, or MASIS_PASSWORD",
    )
    parser.add_argument("--token", help="act as a personal token's account (or MASIS_TOKEN)")
    # ``-v`` after the command too (``ask -v …``): SUPPRESS keeps a ``-v`` before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--verbose", "-v", action="store_true", default=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True)
    add = functools.partial(sub.add_parser, parents=[common])
    for register in COMMANDS:
        register(add)
    return parser


def new_password(args: argparse.Namespace, name: str) -> str:
    """The new password: a line of stdin (``--password-stdin``), else asked twice."""
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass(f"New password for {name}: ")
    if getpass.getpass("Again: ") != first:
        raise InputError("The two passwords differ; nothing was changed.")
    return first


def admin_of(args: argparse.Namespace, bench: Workbench) -> Principal | None:
    """The admin acting; None while there is no account yet (the first becomes admin)."""
    if bench.accounts.count() == 0:
        return None
    who = cli_principal(bench, args.user, args.token, getpass.getpass)
    if not who.admin:
        raise AccessError(f"'{who.name}' is not an admin: only admins manage accounts.")
    return who


def cmd_users(args: argparse.Namespace) -> int:
    """``users add | list | reset | remove | unlock | link``: accounts, for admins (the first
    ``add`` needs no sign-in: it makes the first admin)."""
    bench = Workbench()
    who = admin_of(args, bench)
    if args.action == "list":
        return list_users(bench, args.json)
    if not args.name:
        raise InputError(f"users {args.action} needs an account NAME")
    if who is None and args.action != "add":  # before a password prompt
        raise InputError("There is no account yet: create the first with `users add NAME`.")
    done: dict[str, Any] = {"action": args.action, "name": args.name}
    text = USER_ACTIONS[args.action](args, bench.accounts, who.name if who else "", done)
    print(json.dumps(done, indent=2) if args.json else text)
    return 0


def list_users(bench: Workbench, as_json: bool) -> int:
    rows = [
        {"name": a.name, "admin": a.admin, "created_at": a.created_at, "oidc": a.oidc}
        for a in bench.accounts.all()
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
    for r in [] if as_json else rows:
        print(f"{r['name']}{' (admin)' if r['admin'] else ''}  since {r['created_at']}")
    return 0


def _add(args: argparse.Namespace, accounts: Accounts, actor: str, done: dict[str, Any]) -> str:
    # No one signed in (the first account): refused in the insert's own transaction once
    # another process has made one meanwhile, so two first admins cannot both pass.
    password = new_password(args, args.name)
    acc = accounts.create(args.name, password, actor=actor, admin=args.admin, first_only=not actor)
    done.update(name=acc.name, admin=acc.admin)
    return f"account {acc.name} created{' (admin)' if acc.admin else ''}"


def _reset(args: argparse.Namespace, accounts: Accounts, actor: str, done: dict[str, Any]) -> str:
    revoked = accounts.set_password(args.name, new_password(args, args.name), actor=actor)
    done.update(tokens_revoked=revoked)
    return f"password of {args.name} reset; its sessions have ended; {revoked} tokens revoked"


def _remove(args: argparse.Namespace, accounts: Accounts, actor: str, done: dict[str, Any]) -> str:
    moved = accounts.remove(args.name, actor=actor)
    # The heir is the acting admin, or another one when that admin removed itself.
    heirs = {a for ws in moved for a, role in accounts.members(ws).items() if role == "owner"}
    done.update(workspaces_moved=moved, new_owners=sorted(heirs))
    return f"account {args.name} removed" + (
        f"; {', '.join(moved)} now owned by {', '.join(sorted(heirs))}" if moved else ""
    )


def _unlock(args: argparse.Namespace, accounts: Accounts, actor: str, done: dict[str, Any]) -> str:
    forgotten = accounts.unlock(args.name, actor=actor)
    done.update(failures_forgotten=forgotten)
    return f"account {args.name} unlocked ({forgotten} failed sign-ins forgotten)"


def _link(args: argparse.Namespace, accounts: Accounts, actor: str, done: dict[str, Any]) -> str:
    if not args.subject:
        raise InputError("users link needs --subject SUB (and --issuer ISS) of the identity")
    accounts.link_identity(args.name, args.issuer, args.subject, actor=actor)
    done.update(issuer=args.issuer, subject=args.subject)
    return f"identity {args.subject} of '{args.issuer}' now signs in as {args.name}"


USER_ACTIONS = {"add": _add, "reset": _reset, "remove": _remove, "unlock": _unlock, "link": _link}


def add_users(add: AddCommand) -> None:
    """``users``: accounts, for admins."""
    users = add("users", help="accounts (admins): add, list, reset, remove, unlock, link")
    users.add_argument("action", choices=["list", *USER_ACTIONS])
    users.add_argument("name", nargs="?")
    users.add_argument("--admin", action="store_true", help="add: make the account an admin")
    users.add_argument(
        "--password-stdin", action="store_true", help="add/reset: read the password from stdin"
    )
    users.add_argument("--issuer", default="", help="link: the identity provider's issuer")
    users.add_argument("--subject", help="link: the identity's subject ('sub')")
    users.add_argument("--json", action="store_true")
    users.set_defaults(func=cmd_users)


# Each subcommand registers itself through one ``add`` (``sub.add_parser`` with the options
# every command shares): a new command is one ``add_…`` function and one entry here.
COMMANDS: tuple[Callable[[AddCommand], None], ...] = (add_runs, add_eval, add_calibrate, add_users)


# Loggers whose INFO ``--verbose`` shows; every other library stays at WARNING.
OWN_LOGGERS = ("masis_core", "ingest")


def configure_logging(verbose: bool) -> None:
    """Warnings only, and ``--verbose`` adds our own INFO, never a library's chatter: httpx
    logs every request at INFO (bm25s's own DEBUG is turned down where it is imported)."""
    setup_logging(verbose=False)  # the root, and so every library, at WARNING
    for name in OWN_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.NOTSET)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    try:
        return args.func(args)
    except MasisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
