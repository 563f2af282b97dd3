"""Web research through the real tavily-python client against a fake Tavily on loopback."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from ingest.pipeline import Ingestor
from masis_core.__main__ import main as masis_main
from masis_core.answers.engine import default_allocation
from masis_core.config import Settings, get_settings
from masis_core.services.driving import run_config
from masis_core.services.runs import RunService
from masis_core.services.web import WebSearcher, dedup, normalise_url, web_id
from masis_core.workspaces.workbench import Workbench
from tests.apptest import fresh_app, settle
from tests.fake_tavily import FakeTavily, result
from tests.graphs import accepted
from tests.pdfs import make_pdf
from tests.texts import BOILER, PUMP, REVENUE_A, REVENUE_B

QUESTION = "How often must the hydraulic pump be inspected?"
WEB_RESULTS = [
    result(
        "Hydraulic pump maintenance - Wikipedia",
        "https://en.wikipedia.org/wiki/Hydraulic_pump",
        "A hydraulic pump inspection also covers the hoses and fittings, which must be checked "
        "for leaks and abrasion whenever the pump is inspected.",
    ),
    result(
        "Pump inspection checklist",
        "https://example.com/pump-checklist",
        "Inspect the hydraulic pump mounting bolts for tightness during every inspection.",
        0.7,
    ),
]


@pytest.fixture
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily() as fake:
        fake.state.results[QUESTION] = WEB_RESULTS
        yield fake


@pytest.fixture
def web_bench(settings: Settings, tavily: FakeTavily, monkeypatch) -> Workbench:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-key")
    monkeypatch.setenv("MASIS_TAVILY_BASE_URL", tavily.url)
    monkeypatch.setenv("MASIS_TAVILY_TIMEOUT_S", "2")
    get_settings.cache_clear()
    return Workbench(get_settings())


@pytest.fixture
def plant(web_bench: Workbench):
    ws = web_bench.create_workspace("plant", "wordllama")
    Ingestor(web_bench).ingest_bytes(ws, make_pdf([BOILER, PUMP]), "plant-manual.pdf")
    return ws


def test_request_body_key_result_count_and_domain_filter(web_bench, tavily) -> None:
    searcher = WebSearcher(web_bench.settings)
    searcher.search([QUESTION], trusted_only=False)
    searcher.search([QUESTION], trusted_only=True)
    plain, trusted = tavily.state.requests
    assert plain["headers"]["Authorization"] == "Bearer tvly-test-key"
    assert plain["body"]["query"] == QUESTION and plain["body"]["max_results"] == 5
    assert "include_domains" not in plain["body"]
    assert trusted["body"]["include_domains"] == ["wikipedia.org", "britannica.com", ".edu", ".gov"]


def test_trusted_mode_uses_the_edited_domain_list(settings, tavily, monkeypatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "k")
    monkeypatch.setenv("MASIS_TAVILY_BASE_URL", tavily.url)
    monkeypatch.setenv("MASIS_WEB_TRUSTED_ONLY", "true")
    monkeypatch.setenv("MASIS_TRUSTED_DOMAINS", '["nist.gov", "iso.org"]')
    get_settings.cache_clear()
    out = WebSearcher(get_settings()).search([QUESTION])
    assert tavily.bodies()[0]["include_domains"] == ["nist.gov", "iso.org"]
    assert out.domains == ["nist.gov", "iso.org"]


def test_dedup_by_normalised_url_keeps_the_first() -> None:
    rows = [
        {"url": "https://Example.com/a/", "title": "first"},
        {"url": "https://example.com/a#part", "title": "second"},
        {"url": "https://example.com/b", "title": "third"},
    ]
    kept, dropped = dedup(rows)
    assert [r["title"] for r in kept] == ["first", "third"] and dropped == 1
    assert normalise_url("HTTPS://A.org:443/x/") == "https://a.org/x"
    assert web_id("https://a.org/x/") == web_id("https://A.ORG/x")


def test_duplicates_across_queries_are_dropped(web_bench, tavily) -> None:
    tavily.state.results["pump hoses"] = [
        result("Same page", "https://EN.wikipedia.org/wiki/Hydraulic_pump/", "dup"),
        result("Other", "https://example.org/hoses", "Hoses wear."),
    ]
    out = WebSearcher(web_bench.settings).search([QUESTION, "pump hoses"])
    assert out.received == 4 and out.duplicates_dropped == 1
    assert [r["url"] for r in out.results] == [
        "https://en.wikipedia.org/wiki/Hydraulic_pump",
        "https://example.com/pump-checklist",
        "https://example.org/hoses",
    ]
    assert all(r["chunk_id"].startswith("web:") and r["source"] == "web" for r in out.results)


@pytest.mark.usefixtures("backend")
def test_a_repeated_query_calls_the_api_once(web_bench, tavily) -> None:
    searcher = WebSearcher(web_bench.settings)
    first = searcher.search([QUESTION])
    second = WebSearcher(web_bench.settings).search([QUESTION])  # a new process, same cache
    assert len(tavily.state.requests) == 1
    assert (first.api_calls, first.cache_hits) == (1, 0)
    assert (second.api_calls, second.cache_hits) == (0, 1)
    assert [r["url"] for r in second.results] == [r["url"] for r in first.results]


@pytest.mark.usefixtures("backend")
def test_an_expired_cache_entry_is_fetched_again(settings, tavily, monkeypatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "k")
    monkeypatch.setenv("MASIS_TAVILY_BASE_URL", tavily.url)
    monkeypatch.setenv("MASIS_WEB_CACHE_TTL_H", "0")
    get_settings.cache_clear()
    tavily.state.results[QUESTION] = WEB_RESULTS
    searcher = WebSearcher(get_settings())
    searcher.search([QUESTION])
    searcher.search([QUESTION])
    assert len(tavily.state.requests) == 2


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "Tavily rejected the API key (401)"),
        (429, "usage limit is exceeded (429)"),
        (400, "rejected the request as invalid (400): Invalid request"),
        (500, "server error (500)"),
    ],
)
def test_each_error_has_its_message_and_other_queries_survive(
    web_bench, tavily, status, expected
) -> None:
    tavily.state.status["broken"] = status
    out = WebSearcher(web_bench.settings).search(["broken", QUESTION])
    assert [e["query"] for e in out.errors] == ["broken"]
    assert expected in out.errors[0]["error"]
    assert len(out.results) == 2  # the good query's results are kept


def test_a_time_out_is_reported_and_isolated(web_bench, tavily) -> None:
    tavily.state.hang["slow"] = threading.Event()
    out = WebSearcher(web_bench.settings).search(["slow", QUESTION])
    assert out.errors == [{"query": "slow", "error": "Tavily did not answer within 2 s."}]
    assert len(out.results) == 2


def test_run_mixes_document_and_web_evidence_and_repeats_from_cache(web_bench, plant, tavily):
    research = RunService(web_bench)
    rec = accepted(research, research.ask(plant.id, QUESTION, web=True))
    assert rec.status == "completed", rec.hitl
    sources = {c["source"] for c in rec.citations}
    assert sources == {"kb", "web"}
    web_cites = [c for c in rec.citations if c["source"] == "web"]
    assert all(
        c["url"].startswith("https://") and c["chunk_id"].startswith("web:") for c in web_cites
    )
    kb_cites = [c for c in rec.citations if c["source"] == "kb"]
    assert all(c["filename"] == "plant-manual.pdf" and not c.get("url") for c in kb_cites)
    assert "500 operating hours" in rec.answer
    panel = next(t for t in rec.trace if t["node"] == "web_searcher")
    assert panel["api_calls"] == 1 and panel["cache_hits"] == 0 and panel["results"] == 2
    calls = len(tavily.state.requests)

    again = accepted(research, research.ask(plant.id, QUESTION, web=True))
    assert len(tavily.state.requests) == calls  # no new API request
    panel = next(t for t in again.trace if t["node"] == "web_searcher")
    assert panel["cache_hits"] == 1 and panel["api_calls"] == 0
    assert {c["source"] for c in again.citations} == {"kb", "web"}


def test_web_failure_leaves_the_run_on_document_evidence(web_bench, plant, tavily) -> None:
    tavily.state.status[QUESTION] = 429
    rec = RunService(web_bench).ask(plant.id, QUESTION, web=True)
    assert rec.status == "completed"
    assert {c["source"] for c in rec.citations} == {"kb"}
    panel = next(t for t in rec.trace if t["node"] == "web_searcher")
    assert "usage limit is exceeded (429)" in panel["error"]


def test_empty_workspace_sends_everything_to_the_web(web_bench, tavily) -> None:
    web_bench.create_workspace("empty", "wordllama")
    service = RunService(web_bench)
    rec = accepted(service, service.ask("empty", QUESTION, web=True))
    planner = next(t for t in rec.trace if t["node"] == "planner")
    assert planner["rag_queries"] == 0 and planner["web_queries"] >= 1
    assert next(t for t in rec.trace if t["node"] == "researcher").get("skipped")
    assert rec.status == "completed", rec.hitl
    assert {c["source"] for c in rec.citations} == {"web"}


def test_web_off_sends_nothing_to_the_web(web_bench, plant, tavily) -> None:
    rec = RunService(web_bench).ask(plant.id, QUESTION, web=False)
    assert tavily.state.requests == []
    assert next(t for t in rec.trace if t["node"] == "planner")["web_queries"] == 0


def test_recency_questions_send_every_phrasing_to_the_web() -> None:
    recent = default_allocation("What is the latest pump standard?", ["pump standard"], True)
    plain = default_allocation("What is a pump standard?", ["pump standard"], True)
    assert len(recent["web_queries"]) == 2 and len(plain["web_queries"]) == 1
    assert default_allocation("latest news?", [], False)["web_queries"] == []


def test_without_a_key_nothing_attempts_a_web_request(bench, monkeypatch) -> None:
    import tavily

    def refuse(*args, **kwargs):
        raise AssertionError("a Tavily client was built without a key")

    monkeypatch.setattr(tavily, "TavilyClient", refuse)
    ws = bench.create_workspace("plant", "wordllama")
    Ingestor(bench).ingest_bytes(ws, make_pdf([BOILER, PUMP]), "plant-manual.pdf")
    research = RunService(bench)
    assert research.web_search is None
    rec = research.ask(ws.id, QUESTION, web=True)  # the network guard fails any outbound call
    assert rec.status == "completed"
    assert next(t for t in rec.trace if t["node"] == "web_searcher")["skipped"] is True
    assert bench.web_status()[0] is False


def test_cli_says_when_web_search_is_off(bench, capsys) -> None:
    bench.create_workspace("plant", "wordllama")
    masis_main(["ask", "-w", "plant", QUESTION, "--web", "--json"])
    assert "web search is off" in capsys.readouterr().err.lower()


def test_research_page_web_toggle_panel_and_links(web_bench, plant, tavily) -> None:
    at: AppTest = fresh_app().run().switch_page("pages/research.py").run()
    toggle = at.toggle[0]
    assert not toggle.disabled
    at.text_area[0].input(QUESTION)
    toggle.set_value(True)
    at.toggle[1].set_value(True)  # trusted sources only
    next(t for t in at.text_input if t.label == "Trusted domains").input("Wikipedia.org; .gov")
    settle(at.button(key="FormSubmitter:ask-Ask").click().run())  # the run is a server job
    assert tavily.bodies()[0]["include_domains"] == ["wikipedia.org", ".gov"]
    panel = next(s for s in at.status if "Searched the web" in s.label)
    assert "1 result from 1 query" in panel.label and "cache" not in panel.label
    web_source = next(e for e in at.main.expander if "wikipedia.org" in e.label)
    assert any(
        "](https://en.wikipedia.org/wiki/Hydraulic_pump)" in m.value for m in web_source.markdown
    )
    # A web page has no page to draw: the view says so and quotes the cited words.
    n = web_source.label.split("]")[0].lstrip("[")
    at.toggle(key=f"page-{at.query_params['run']}-{n}").set_value(True).run()
    assert not at.exception and not at.get("image")
    assert any("web source has no page to draw" in i.value for i in at.info)


def test_a_web_source_rejected_in_a_conflict_review_stays_out_though_cached(
    web_bench, tavily
) -> None:
    question = "What total revenue did Northwind Traders report for 2023?"
    ws = web_bench.create_workspace("finance", "wordllama")
    report = Ingestor(web_bench).ingest_bytes(ws, REVENUE_A.encode(), "annual-report.txt")
    rejected_url = "https://news.example.com/northwind-2023"
    tavily.state.results[question] = [result("Northwind press summary", rejected_url, REVENUE_B)]
    research = RunService(web_bench)
    rec = research.ask(ws.id, question, web=True)
    assert rec.status == "needs_human" and rec.hitl["kind"] == "conflict", rec.hitl
    (conflict,) = rec.hitl["details"]["conflicts"]
    assert {s["doc_id"] for s in conflict["sources"]} == {report.doc_id, web_id(rejected_url)}

    done = research.resume(rec.run_id, {"action": "choose_source", "source": report.doc_id})
    assert done.status == "completed", done.hitl
    resumed = [t for t in done.trace if t["node"] == "web_searcher"][-1]
    assert resumed["cache_hits"] == 1 and resumed["excluded"] == 1  # the cache still has it
    state = research.graph.get_state(run_config(done.run_id)).values
    evidence = [*state["evidence"], *state["web_evidence"]]
    assert evidence and all(e["doc_id"] == report.doc_id for e in evidence)
    assert {c["doc_id"] for c in done.citations} == {report.doc_id}
    assert "37" not in done.answer and rejected_url not in json.dumps(done.citations)


def test_a_follow_up_searches_the_web_when_the_form_says_so(web_bench, plant, tavily) -> None:
    """The follow-up form sits under the answer, far from the toggles; the analyst who turned
    web search on expects the follow-up to search the web too, with the same trusted domains."""
    at: AppTest = fresh_app().run().switch_page("pages/research.py").run()
    at.text_area[0].input(QUESTION)
    at.toggle[0].set_value(True)
    at.toggle[1].set_value(True)  # trusted sources only
    next(t for t in at.text_input if t.label == "Trusted domains").input("wikipedia.org")
    at = settle(at.button(key="FormSubmitter:ask-Ask").click().run())
    first = at.query_params["run"]
    first = first[0] if isinstance(first, list) else first
    asked_before = len(tavily.bodies())
    assert asked_before >= 1

    key = f"follow-{first}"
    at.text_input(key=f"{key}-typed").input("What pressure does its relief valve open at?")
    at.button(key=f"{key}-rewrite").click().run()
    at = settle(at.button(key=f"{key}-ask").click().run())
    assert not at.exception, at.exception
    second = at.query_params["run"]
    second = second[0] if isinstance(second, list) else second
    rec = RunService(web_bench).get(second)
    assert rec is not None and rec.thread == first
    assert rec.input is not None and rec.input["web_enabled"] is True
    later = tavily.bodies()[asked_before:]
    assert later, "the follow-up sent nothing to the web"
    assert all(body["include_domains"] == ["wikipedia.org"] for body in later)
    assert any("relief valve" in body["query"] for body in later)
