"""A team on one backend: two app processes, eight analysts, a PDF batch ingesting meanwhile.

    nice python -m bench.load [--analysts 8] [--questions 25] [--pdfs 20] [--minutes 10]
        [--cache DIR] [--same-workspace]
    MASIS_CHROMA_HOST=... MASIS_POSTGRES_URL=... nice python -m bench.load   # server backend

Each app process is built as the Streamlit server builds its own (``ui/resources.py``): one
``Workbench``, one ``RunService``, one ``JobManager`` over an ``Ingestor``, swept at start.
Its analysts (threads) ask through ``JobManager.ask`` — what the research page calls — and
wait on the job the page follows, one question every ``--pace`` seconds (by default the
questions are spread over the time limit: 25 in 10 minutes, a question every 24 s, reading
time included; ``--pace 0``: back to back, the worst case); the first process also starts
a batch of PDFs through ``JobManager.ingest``, as the library page does, into a second
workspace (``--same-workspace``: into the one the analysts query). Offline engine, loopback
only. The backend is the environment's: the embedded SQLite + Chroma store in a temporary
data dir, or ``MASIS_CHROMA_HOST``/``MASIS_POSTGRES_URL`` (servers started beforehand).

The analysts ask questions of the development set (``../shared/eval/fitzgov-dev``), whose
corpus is indexed first (one chunk per document). Reported, side by side:

- one analyst alone in one process, no batch: p50/p95 time to answer (ask to the run
  stopping: answered, or paused for review);
- the team: runs completed, failures (failed runs or jobs, errors, any 'database is locked'
  in the processes' logs), p50/p95 time to answer and its ratio to alone (target <= 3x on 2
  cores), the batch's files and time, peak memory per process (and its largest parse child);
- the run store read afterwards: every run the analysts started is there once, none is
  left 'running', none is there that nobody started.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.retrieval_quality import DEFAULT_DATASET

LOCKED = "database is locked"
# Text PDFs of the hard set that the 15 manuals are topped up with to make a 20-file batch
# (all have a text layer: no OCR, which would measure the OCR engine instead).
TOP_UP = [
    "pypdf__GeoBase_NHNC1_Data_Model_UML_EN.pdf",
    "pypdf__example.pdf",
    "pypdf__pdflatex-outline.pdf",
    "pypdf__side-by-side-subfig.pdf",
    "pypdf__test_Orient.pdf",
    "pypdf__issue-301.pdf",
]


def settings_for(data_dir: Path) -> Any:
    """The environment's backend (MASIS_CHROMA_HOST, MASIS_POSTGRES_URL) over ``data_dir``."""
    from masis_core.config import Settings

    return Settings(data_dir=data_dir, provider="offline")


def backend_name(settings: Any) -> str:
    vectors = (
        f"Chroma server {settings.chroma_host}:{settings.chroma_port}"
        if settings.chroma_host
        else "embedded Chroma"
    )
    rows = "PostgreSQL" if settings.postgres_url else "SQLite"
    return f"{rows} + {vectors}"


def pdf_batch(count: int) -> list[Path]:
    corpus = Path(os.environ.get("MASIS_PDF_CORPUS", ".pdf-corpus"))
    files = sorted((corpus / "manuals").glob("*.pdf"))
    files += [corpus / "hard" / n for n in TOP_UP if (corpus / "hard" / n).exists()]
    if len(files) < count:
        sys.exit(f"Only {len(files)} PDFs under {corpus}; set MASIS_PDF_CORPUS (manuals/, hard/).")
    return files[:count]


# -- one app process -------------------------------------------------------------------
class LogScan(logging.Handler):
    """Counts warnings and errors, and those that say the database was locked."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.errors: list[str] = []
        self.locked = 0

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f" ({record.exc_info[1]})"
        if LOCKED in text:
            self.locked += 1
        if record.levelno >= logging.ERROR:
            self.errors.append(text[:300])


def worker(spec_path: Path) -> None:
    """An app process: build what the UI builds, say ready, wait for go, run the analysts."""
    spec = json.loads(spec_path.read_text())
    scan = LogScan()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger().addHandler(scan)
    bench, research, jobs = build_app(spec)
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.monotonic()
    deadline = start + spec["seconds"]
    batch, watch, batch_s = start_batch(bench, jobs, spec, start)
    answers = run_analysts(spec, research, jobs, start, deadline)
    files = finish_batch(batch, watch, deadline)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result = {
        "answers": answers,
        "files": files,
        "batch_s": batch_s[0] if batch_s else None,
        "batch_state": batch.state if batch else None,
        "peak_mb": peak,
        "child_peak_mb": child,
        "locked": scan.locked,
        "errors": scan.errors,
    }
    Path(spec["out"]).write_text(json.dumps(result))


def build_app(spec: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The Workbench, RunService and JobManager, as ``ui/resources.py`` builds them, and the
    workspace's index loaded as a first query would."""
    from ingest.pipeline import Ingestor
    from masis_core.services.jobs import JobManager
    from masis_core.services.runs import RunService
    from masis_core.workspaces.workbench import Workbench

    bench = Workbench(settings_for(Path(spec["data_dir"])))
    research = RunService(bench)
    ingestor = Ingestor(bench)
    ingestor.sweep_stale()
    jobs = JobManager(research, ingestor)
    ws_id = spec["workspace"]
    bench.index(ws_id, bench.registry.require_workspace(ws_id).embed_model)  # as a first query
    return bench, research, jobs


def start_batch(
    bench: Any, jobs: Any, spec: dict[str, Any], start: float
) -> tuple[Any, threading.Thread | None, list[float]]:
    """The spec's PDFs as one ingest job, and a thread that notes when it finished."""
    from ingest.pipeline import Source

    batch = None
    watch = None
    batch_s: list[float] = []
    if spec["pdfs"]:
        target = bench.registry.require_workspace(spec["ingest_workspace"])
        batch = jobs.ingest(target, [Source.of_path(Path(p)) for p in spec["pdfs"]])
        watch = threading.Thread(
            target=lambda: batch_s.append(time.monotonic() - start) if batch.wait() else None,
            daemon=True,
        )
        watch.start()
    return batch, watch, batch_s


def run_analysts(
    spec: dict[str, Any], research: Any, jobs: Any, start: float, deadline: float
) -> list[dict[str, Any]]:
    """Every analyst of the spec in a thread of its own; their answers once all are done."""
    answers: list[dict[str, Any]] = []
    lock = threading.Lock()

    def analyst(n: int, questions: list[str]) -> None:
        pace = spec["pace"]
        due = start + random.Random(n).uniform(0, pace)  # analysts do not start in step
        for q in questions:
            time.sleep(max(0.0, due - time.monotonic()))
            if time.monotonic() > deadline:
                return
            asked = time.monotonic()
            due = asked + pace
            entry = ask_once(research, jobs, spec["workspace"], n, q, asked)
            with lock:
                answers.append(entry)

    threads = [
        threading.Thread(target=analyst, args=(n, qs), name=f"analyst-{n}")
        for n, qs in spec["analysts"]
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers


def ask_once(research: Any, jobs: Any, ws_id: str, n: int, q: str, asked: float) -> dict[str, Any]:
    """One question asked as the research page asks it, waited on as the page waits."""
    entry: dict[str, Any] = {"analyst": n, "question": q}
    try:
        job = jobs.ask(ws_id, q, mode="hybrid")
        entry["run_id"] = job.id
        job.wait()
        entry["seconds"] = time.monotonic() - asked
        rec = research.get(job.id)
        entry["job"] = job.state
        entry["status"] = rec.status if rec else "missing"
        entry["error"] = job.error or (rec.error if rec else "no record")
    except Exception as exc:  # an analyst's failure is a figure, not the end
        entry["status"], entry["error"] = "exception", f"{type(exc).__name__}: {exc}"
    return entry


def finish_batch(
    batch: Any, watch: threading.Thread | None, deadline: float
) -> list[dict[str, Any]]:
    """Let the batch finish until the deadline (cancel it then), and report each file."""
    if batch is None:
        return []
    if not batch.wait(max(0.0, deadline - time.monotonic())):
        batch.cancel()
        batch.wait()
    if watch is not None:
        watch.join()
    return [
        {
            "name": f.name,
            "status": f.report.status if f.report else f.stage,
            "error": f.report.error if f.report else None,
        }
        for f in batch.files
    ]


# -- the orchestra -------------------------------------------------------------------
def launch(specs: list[dict[str, Any]], tmp: Path) -> list[dict[str, Any]]:
    """Start one app process per spec, let them all load, then start them at once."""
    tmp.mkdir(parents=True, exist_ok=True)
    procs = []
    for i, spec in enumerate(specs):
        spec["out"] = str(tmp / f"out{i}.json")
        path = tmp / f"spec{i}.json"
        path.write_text(json.dumps(spec))
        stderr = (tmp / f"stderr{i}.log").open("w")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "bench.load", "--worker", str(path)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        )
    for p in procs:
        assert p.stdout is not None
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError(f"an app process did not start; see {tmp}/stderr*.log")
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        p.wait()
    results = []
    for i, p in enumerate(procs):
        log_text = (tmp / f"stderr{i}.log").read_text(errors="replace")
        if p.returncode != 0:
            raise RuntimeError(f"app process {i} exited {p.returncode}:\n{log_text[-2000:]}")
        result = json.loads(Path(specs[i]["out"]).read_text())
        result["locked"] = max(result["locked"], log_text.count(LOCKED))
        results.append(result)
    return results


def pct(values: list[float], p: float) -> float:
    return float(np.percentile(values, p)) if values else float("nan")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--analysts", type=int, default=8, help="over two app processes")
    parser.add_argument("--questions", type=int, default=25, help="per analyst")
    parser.add_argument("--pdfs", type=int, default=20, help="files in the ingest batch")
    parser.add_argument("--minutes", type=float, default=10.0, help="the analysts' time limit")
    parser.add_argument(
        "--pace",
        type=float,
        help="seconds from one question of an analyst to the next, reading time included "
        "(default: the questions spread over the time limit; 0: back to back)",
    )
    parser.add_argument("--same-workspace", action="store_true", help="ingest where they ask")
    parser.add_argument(
        "--cache",
        type=Path,
        help="embedded backend only: keep the indexed development set here and start each run "
        "from a copy of it (indexing takes minutes)",
    )
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.worker:
        worker(args.worker)
        return
    logging.basicConfig(level=logging.ERROR)
    from evaluation.retrieval import load_beir
    from masis_core.services.runs import RunStore

    corpus, queries, qrels = load_beir(args.dataset)
    qids = sorted(q for q in queries if q in qrels)
    random.Random(7).shuffle(qids)
    per = args.questions
    asked = [
        [queries[q]["text"] for q in qids[i * per : (i + 1) * per]] for i in range(args.analysts)
    ]
    pdfs = [str(p) for p in pdf_batch(args.pdfs)] if args.pdfs else []
    with tempfile.TemporaryDirectory(prefix="masis-load-") as tmp_name:
        tmp = Path(tmp_name)
        data_dir = tmp / "data"
        settings = settings_for(data_dir)
        start = time.perf_counter()
        bench, ws = indexed_workspace(args, settings, data_dir, corpus)
        target = (
            ws if args.same_workspace else bench.registry.create_workspace("batch", "wordllama")
        )
        print(
            f"{backend_name(settings)}; {len(corpus)} chunks indexed in "
            f"{time.perf_counter() - start:.0f} s; offline engine",
            flush=True,
        )
        seconds = args.minutes * 60
        base = {"data_dir": str(data_dir), "workspace": ws.id, "seconds": seconds}
        pace = args.pace if args.pace is not None else seconds / max(1, per)
        # Alone: back to back (one analyst's answer does not depend on the pace).
        alone_spec = {**base, "analysts": [[0, asked[0]]], "pdfs": [], "pace": 0.0}
        (alone,) = launch([alone_spec], tmp / "a")
        print(f"alone: {len(alone['answers'])} runs", flush=True)
        half = (args.analysts + 1) // 2
        team_specs = [
            {
                **base,
                "analysts": [[n, asked[n]] for n in range(args.analysts) if (n >= half) == bool(i)],
                "pdfs": pdfs if i == 0 else [],
                "pace": pace,
                "ingest_workspace": target.id,
            }
            for i in range(2)
        ]
        wall = time.perf_counter()
        team = launch(team_specs, tmp / "t")
        wall = time.perf_counter() - wall
        stored = RunStore(bench).list(ws.id, limit=1_000_000)
        documents = bench.registry.list_documents(target.id, status=None)
    report(args, pace, alone, team, stored, documents, wall)


def indexed_workspace(
    args: argparse.Namespace, settings: Any, data_dir: Path, corpus: Any
) -> tuple[Any, Any]:
    """The Workbench over ``data_dir`` and the 'team' workspace with the development corpus
    indexed: copied from ``--cache`` when it holds one (embedded backend only), else indexed
    here (and kept there)."""
    from evaluation.retrieval import index_corpus
    from masis_core.workspaces.workbench import Workbench

    embedded = not settings.chroma_host and not getattr(settings, "postgres_url", None)
    cached = args.cache / "indexed" if args.cache and embedded else None
    if cached is not None and (cached / "done").exists():
        shutil.copytree(cached, data_dir)
        bench = Workbench(settings)
        return bench, bench.registry.require_workspace("team")
    bench = Workbench(settings)
    ws = bench.registry.create_workspace("team", "wordllama")
    index_corpus(bench, ws.id, "wordllama", corpus)
    if cached is not None:
        shutil.rmtree(cached, ignore_errors=True)
        shutil.copytree(data_dir, cached)
        (cached / "done").write_text("ok")
    return bench, ws


def report(
    args: argparse.Namespace,
    pace: float,
    alone: dict[str, Any],
    team: list[dict[str, Any]],
    stored: list[Any],
    documents: list[Any],
    wall: float,
) -> None:
    answers = [a for r in team for a in r["answers"]]
    files = team[0]["files"]
    where = "the same" if args.same_workspace else "another"
    print(
        f"\n{args.analysts} analysts x {args.questions} questions over 2 app processes, "
        f"{len(files)}-PDF batch ingesting meanwhile into {where} workspace; a question every "
        f"{pace:.0f} s per analyst (0: back to back); limit {args.minutes:g} min; team phase "
        f"{wall:.0f} s"
    )
    report_times(alone, answers)
    report_failures(alone, team, answers)
    report_store(alone, answers, stored)
    report_batch(team, files, documents)
    for i, r in enumerate(team):
        print(
            f"app process {i + 1}: peak {r['peak_mb']:.0f} MB (largest parse child "
            f"{r['child_peak_mb']:.0f} MB), {len(r['answers'])} runs"
        )
    print(f"alone: peak {alone['peak_mb']:.0f} MB")


def report_times(alone: dict[str, Any], answers: list[dict[str, Any]]) -> None:
    """Time to answer, alone and in the team, and the ratio of their p95s."""
    times = [a["seconds"] for a in answers if "seconds" in a]
    solo = [a["seconds"] for a in alone["answers"] if "seconds" in a]
    print(f"| {'':34} | {'runs':>5} | {'p50 s':>6} | {'p95 s':>6} | {'max s':>6} |")
    print(f"|{'-' * 36}|{'-' * 7}|{'-' * 8}|{'-' * 8}|{'-' * 8}|")
    for name, values in (("one analyst alone", solo), ("team (each analyst)", times)):
        print(
            f"| {name:34} | {len(values):5} | {pct(values, 50):6.2f} | {pct(values, 95):6.2f} | "
            f"{max(values, default=float('nan')):6.2f} |"
        )
    print(f"p95 team / alone = {pct(times, 95) / pct(solo, 95):.2f} (target <= 3)")


def report_failures(
    alone: dict[str, Any], team: list[dict[str, Any]], answers: list[dict[str, Any]]
) -> None:
    """The runs' outcomes, the failed ones, and the locks and errors in the logs."""
    failed = [a for a in answers if a.get("status") in ("failed", "exception", "missing")]
    failed += [a for a in answers if a.get("job") == "failed" and a not in failed]
    outcomes: dict[str, int] = {}
    for a in answers:
        outcomes[a.get("status", "?")] = outcomes.get(a.get("status", "?"), 0) + 1
    print(f"run outcomes: {dict(sorted(outcomes.items()))}; failures: {len(failed)}")
    for a in failed[:5]:
        print(f"  failed: {a.get('error')}")
    locked = sum(r["locked"] for r in team) + alone["locked"]
    errors = [e for r in team for e in r["errors"]]
    print(f"'{LOCKED}' in the logs: {locked}; error log lines: {len(errors)}")
    for e in errors[:5]:
        print(f"  {e}")


def report_store(alone: dict[str, Any], answers: list[dict[str, Any]], stored: list[Any]) -> None:
    """Every run started is stored once, none is left running, none is a stranger."""
    started = [a["run_id"] for a in answers + alone["answers"] if "run_id" in a]
    by_id = {r.run_id: r for r in stored}
    lost = [r for r in started if r not in by_id]
    duplicated = len(started) - len(set(started))
    strangers = [r for r in by_id if r not in set(started)]
    left_running = [r for r in by_id.values() if r.status == "running"]
    print(
        f"run store afterwards: {len(stored)} runs for {len(started)} started; lost "
        f"{len(lost)}, duplicated {duplicated}, unknown {len(strangers)}, left running "
        f"{len(left_running)}"
    )


def report_batch(
    team: list[dict[str, Any]], files: list[dict[str, Any]], documents: list[Any]
) -> None:
    """The batch's files by outcome, its time, and the documents it left half-ingested."""
    states: dict[str, int] = {}
    for f in files:
        states[f["status"]] = states.get(f["status"], 0) + 1
    half_done = [d for d in documents if d.status == "ingesting"]
    for f in files:
        if f["error"]:
            print(f"  {f['name']}: {f['status']}: {f['error'][:200]}")
    print(
        f"batch: {dict(sorted(states.items()))} in {team[0]['batch_s'] or 0:.0f} s "
        f"({team[0]['batch_state']}); registry: {len(documents)} documents, "
        f"{len(half_done)} left ingesting"
    )


if __name__ == "__main__":
    main()
