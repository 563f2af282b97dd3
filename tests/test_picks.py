"""A workspace's picks teach its passage scorer (``masis_core.workspaces.picks``): after
enough picks of one kind of passage, the same question leads with it in that workspace; a
workspace beside it keeps the shipped scorer. Real SQLite, ChromaDB and LangGraph."""

from __future__ import annotations

from ingest.pipeline import Ingestor
from masis_core.answers.compose import load_weights
from masis_core.services.runs import RunService
from masis_core.workspaces.picks import MIN_PICKS, PickStore, refit
from tests.texts import BOILER_LOG_ENTRIES, BOILER_LOG_PLACE, BOILER_LOG_QUESTION

ENTRIES = "Each entry of the boiler log records the pressure"
PLACE = "The boiler log is kept in the plant office"
# Picks of the same choice, as many as the policy asks before a workspace's refit counts.
TAUGHT = MIN_PICKS


def _workspace(bench, name: str):
    ws = bench.create_workspace(name, "wordllama")
    ingestor = Ingestor(bench)
    ingestor.ingest_bytes(ws, BOILER_LOG_PLACE.encode(), "office.txt")
    ingestor.ingest_bytes(ws, BOILER_LOG_ENTRIES.encode(), "log.txt")
    return ws


def test_picks_of_one_kind_of_passage_lead_with_it_in_that_workspace_only(bench) -> None:
    taught, other = _workspace(bench, "plant"), _workspace(bench, "annex")
    runs = RunService(bench)
    for _ in range(TAUGHT):
        paused = runs.ask(taught.id, BOILER_LOG_QUESTION)
        assert paused.status == "needs_human" and paused.answer.startswith(PLACE)
        done = runs.resume(paused.run_id, {"action": "accept", "lead": 1})
        assert done.answer.startswith(ENTRIES)
    assert len(PickStore(bench.db).picks(taught.id)) == TAUGHT
    weights = PickStore(bench.db).weights(taught.id)
    assert weights is not None and weights != load_weights()
    after = runs.ask(taught.id, BOILER_LOG_QUESTION)
    assert after.answer.startswith(ENTRIES), after.answer
    synth = [e for e in after.trace if e.get("node") == "synthesizer"]
    assert synth[-1]["passage_weights"] == "refitted on this workspace's picks"
    # The workspace beside it: no picks, the shipped scorer, the lead as before.
    assert PickStore(bench.db).weights(other.id) is None
    assert runs.ask(other.id, BOILER_LOG_QUESTION).answer.startswith(PLACE)


def test_fewer_picks_than_the_policy_keep_the_shipped_weights(bench) -> None:
    ws = _workspace(bench, "plant")
    picks = PickStore(bench.db)
    for n in range(MIN_PICKS - 1):
        picks.record(ws.id, f"run-{n}", {"coverage": 1.0}, [{"coverage": 0.2}])
    assert picks.weights(ws.id) is None
    picks.record(ws.id, "run-0", {"coverage": 1.0}, [{"coverage": 0.2}])  # the same run again
    assert picks.weights(ws.id) is None


def test_the_refit_moves_towards_what_the_picks_agree_on_and_no_further() -> None:
    shipped = {"coverage": 2.0, "rank": 1.5}
    rank_wins = [({"coverage": 0.4, "rank": 1.0}, [{"coverage": 0.8, "rank": 0.2}])] * 5
    fitted = refit(shipped, rank_wins)
    assert fitted["rank"] > shipped["rank"] and fitted["coverage"] < shipped["coverage"]
    stronger = refit(shipped, rank_wins, prior=10.0)  # a stronger prior moves it less
    assert abs(stronger["rank"] - 1.5) < abs(fitted["rank"] - 1.5)
    assert refit(shipped, []) == shipped
