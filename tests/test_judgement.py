"""The critic's judgement: each feature on text like an analyst's PDFs, the calibrated
confidence, and stance conflicts in the review's shape."""

from __future__ import annotations

import json

import pytest

from masis_core.answers import confidence, judgement, offline, question, stances
from masis_core.answers.confidence import LOW_CONFIDENCE, disputed
from masis_core.answers.features import DISPUTE_FEATURES, features, lead_of
from masis_core.answers.judgement import judge
from masis_core.answers.question import asked_kind, kind_present
from masis_core.answers.stances import asked_clash, figure_clash, stance_clash
from masis_core.state import Evidence
from masis_core.text.markup import percent
from masis_core.text.sentences import content_stems
from tests.texts import BRIDGE_A, BRIDGE_B

UPS_RUNTIME = (
    "The upsc command lists the variables a UPS driver exposes. battery.runtime reports the "
    "remaining runtime in seconds, and battery.charge the charge in percent; when the UPS "
    "switches to battery the ups.status variable changes from OL to OB."
)
UPS_SHUTDOWN = (
    "When the UPS reaches a low battery state, upsmon tells the master to shut down the "
    "system. The shutdown command is configured with SHUTDOWNCMD in upsmon.conf, and the "
    "POWERDOWNFLAG file tells the init scripts to power off the UPS load."
)
R_INSTALL = (
    "R can be installed from source on a Unix-alike by running configure and make in the "
    "top-level directory. The make install target copies the complete R tree to the prefix "
    "given to configure, by default /usr/local."
)


def ev(n: int, text: str, doc: str | None = None, score: float = 0.5) -> Evidence:
    return Evidence(
        chunk_id=f"c{n}",
        doc_id=doc or f"doc{n}",
        filename=f"{doc or f'doc{n}'}.pdf",
        page_start=n + 3,
        page_end=n + 3,
        text=text,
        score=score,
        coverage=0.6,
        soft=0.5,
        source="kb",
    )


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many minutes of runtime does a Back-UPS 700 give at half load?", "quantity"),
        ("What is the maximum length of the serial cable?", "quantity"),
        ("When was the POWERDOWNFLAG mechanism introduced?", "date"),
        ("Which version of R added the make install target?", "version"),
        ("Who maintains the usbhid-ups driver?", "name"),
        ("Is it safe to run upsmon as root?", "yes_no"),
        ("How do I install R from source?", "open"),
    ],
)
def test_asked_kind(question: str, kind: str) -> None:
    assert asked_kind(question) == kind


def test_what_is_asked_present_or_absent_in_manual_text() -> None:
    q = "After how many years should the battery of a UPS be replaced?"
    assert asked_kind(q) == "quantity"
    assert not kind_present("quantity", UPS_SHUTDOWN, q)  # the topic, no figure
    assert kind_present("quantity", "Replace the battery every 3 to 5 years.", q)
    assert kind_present("date", "It was added to NUT in 2011.", "")
    assert not kind_present("date", UPS_SHUTDOWN, "")
    assert kind_present("version", "R 4.2.2 added it.", "")
    assert not kind_present("version", R_INSTALL, "")
    # A name the question itself gives is not an answer to "who".
    who = "Who wrote the upsmon documentation for Network UPS Tools?"
    assert not kind_present("name", "Network UPS Tools ships upsmon.", who)
    assert kind_present("name", "Russell Kroll wrote upsmon for Network UPS Tools.", who)


def test_features_see_the_missing_figure_and_name_of_the_question() -> None:
    evidence = [ev(1, UPS_SHUTDOWN), ev(2, UPS_RUNTIME)]
    f = features(
        "How many watts does the APC Smart-UPS 1500 draw in 2019 in a low battery state?",
        f"{UPS_SHUTDOWN.split('. ', maxsplit=1)[0]}. [1]",
        evidence,
    )
    assert f["asked_specific"] == 1.0
    assert f["question_figures_missing"] == 1.0  # 1500 and 2019 are nowhere
    assert f["question_names_missing"] > 0  # APC, Smart-UPS are nowhere
    assert f["max_dense"] == 0.5
    assert 0.0 < f["answer_coverage"] <= 1.0
    assert f["sources"] == 2.0


def test_on_topic_but_unanswerable_question_is_not_confident() -> None:
    """The documents discuss UPS batteries and shutdown; none says when to replace one."""
    evidence = [ev(1, UPS_SHUTDOWN), ev(2, UPS_RUNTIME)]
    q = "After how many years should the battery of a UPS be replaced?"
    critique = offline.critique(
        q,
        "When the UPS reaches a low battery state, upsmon tells "
        "the master to shut down the system. [1]",
        evidence,
    )
    assert critique["confidence"] < LOW_CONFIDENCE
    assert critique["recommend_retry"] is True
    assert critique["conflicts"] == []


def test_a_supported_answer_is_confident() -> None:
    evidence = [ev(1, R_INSTALL, score=0.7)]
    answer = (
        "R can be installed from source on a Unix-alike by running configure and make in the "
        "top-level directory. [1]"
    )
    critique = offline.critique("How do I install R from source on a Unix-alike?", answer, evidence)
    assert critique["confidence"] >= LOW_CONFIDENCE
    assert critique["recommend_retry"] is False
    assert critique["conflicts"] == []


def test_stance_clash_is_a_position_not_a_figure() -> None:
    assert stance_clash(
        "The 2023 review found that the drug increases the risk of stroke.",
        "A 2024 trial found the drug reduces the risk of stroke.",
    )
    assert stance_clash(
        "The vendor recommends enabling the option.", "The audit advises against enabling it."
    )
    assert stance_clash("The device is safe for home use.", "Regulators call it unsafe.")
    assert stance_clash("Study A found a link to cancer.", "Study B found no link to cancer.")
    # The same position twice, or figures alone, are no stance clash.
    assert stance_clash("Sales increased by 4%.", "Sales increased by 7%.") is None
    assert figure_clash("It absorbs 21 kilograms a year.", "It absorbs 48 kilograms a year.")
    assert figure_clash("It absorbs 21 kilograms.", "It absorbs 21 kilograms or more.") is None


def test_opposed_sources_are_named_with_the_point_of_disagreement() -> None:
    a = ev(
        1,
        "A 2023 systematic review of 56 studies found that long-term use of the sweetener "
        "increases body weight and recommended against its use for weight control.",
        doc="who-review",
    )
    b = ev(
        2,
        "A 2024 randomised trial of 1,548 adults found that the sweetener reduces body weight "
        "and criticized the review for relying on observational data.",
        doc="nejm-trial",
    )
    params = {**confidence.load_params(), "dispute_threshold": 0.0}  # always report
    verdict = judge("Does the sweetener cause weight gain?", "x [1]", [a, b], params=params)
    assert verdict.features["opposed_pair"] == 1.0
    [conflict] = verdict.conflicts
    assert set(conflict) >= {"topic", "reason", "sources"}
    assert "opposite positions" in conflict["reason"]
    docs = [s["doc_id"] for s in conflict["sources"]]
    assert docs == ["who-review", "nejm-trial"]
    for s in conflict["sources"]:
        assert set(s) >= {"doc_id", "filename", "page", "text"}
        assert s["text"]


def test_one_document_never_disputes_itself() -> None:
    same = [
        ev(1, "The option increases throughput.", doc="manual"),
        ev(2, "The option decreases throughput.", doc="manual"),
    ]
    params = {**confidence.load_params(), "dispute_threshold": 0.0}
    assert judge("Does the option help throughput?", "x [1]", same, params=params).conflicts == []


def test_empty_answer_has_zero_confidence() -> None:
    verdict = judge("How do I install R?", "", [ev(1, R_INSTALL)])
    assert verdict.confidence == 0.0
    assert verdict.conflicts == []


def test_llm_opinion_moves_the_probability() -> None:
    base = 0.7
    assert confidence.with_opinion(base, 0.95) > base
    assert confidence.with_opinion(base, 0.05) < base


def test_shipped_parameters_match_the_features() -> None:
    params = json.loads(confidence.PARAMS_PATH.read_text())
    # A lead that quotes its evidence: every feature has a measure (the reader's included).
    names = set(features("How do I install R?", f"{R_INSTALL} [1]", [ev(1, R_INSTALL)]))
    # The section's features come from the composer when the evidence has sections; absent,
    # the model reads each as its fitted mean (``model_probability``).
    names |= {"section_margin", "section_keywords", "section_meaning"}
    for model in ("answer", "dispute", "documents"):
        m = params[model]
        assert set(m["features"]) <= names
        assert len(m["coef"]) == len(m["mean"]) == len(m["scale"]) == len(m["features"])
    # The dispute model looks only at how the sources stand, never at coverage.
    assert set(params["dispute"]["features"]) <= set(DISPUTE_FEATURES)
    assert 0.0 < params["dispute_threshold"] < 1.0
    p = confidence.probabilities(features("How do I install R?", "R [1]", [ev(1, R_INSTALL)]))
    assert p["answer"] + p["abstain"] == pytest.approx(1.0)
    assert 0.0 <= p["dispute"] <= 1.0


# A ~150-word chunk of NUT's user manual (page 58), as the ingest cuts a PDF page.
NUT_LISTEN = (
    "Bind a listening port to the interface specified by its Internet address. This may be "
    "useful on hosts with multiple interfaces. You should not rely exclusively on this for "
    "security, as it can be subverted on many systems. Listen on TCP port port instead of the "
    "default value which was compiled into the code. This overrides any value you may have set "
    "with configure --with-port. If you don’t change it with configure or this value, upsd will "
    "listen on port 3493 for this interface. Multiple LISTEN addresses may be specified. The "
    "default is to bind to 127.0.0.1 if no LISTEN addresses are specified (and ::1 if IPv6 "
    "support is compiled in). This parameter will only be read at startup. You’ll need to "
    "restart (rather than reload) upsd to apply any changes made here. NUT has its own "
    "official IANA port: 3493/tcp. The upsd daemon answers the clients' queries on it, and "
    "upsmon on every secondary system connects to it to learn the state of the UPS. Firewalls "
    "between the systems must let this port through."
)


def test_answers_drawn_from_documents_get_the_document_model() -> None:
    """Over a manual's chunks every passage shares the question's words: the development
    model said 99% for user-phrased manual questions that were answered right half the time
    (``bench.manual_abstain --howto``). There, the document model fitted on manual questions
    gives the probability; short passages keep the development model."""
    params = confidence.load_params()
    docs = params["documents"]
    q = "How do I make upsd listen on another port?"
    answer = (
        "Listen on TCP port port instead of the default value which was compiled into the "
        "code. [1] This overrides any value you may have set with configure --with-port. [1]"
    )
    long_feats = features(q, answer, [ev(1, NUT_LISTEN)])
    short = NUT_LISTEN[: NUT_LISTEN.index(" This overrides") + 1]
    short_feats = features(q, answer, [ev(1, short)])
    assert long_feats["passage_words"] >= docs["min_words"] > short_feats["passage_words"]
    assert long_feats["how_to"] == 1.0 and long_feats["lead_coverage"] > 0
    on_documents = confidence.probabilities(long_feats)["answer"]
    assert on_documents == pytest.approx(confidence.model_probability(docs, long_feats))
    assert confidence.probabilities(short_feats)["answer"] == pytest.approx(
        confidence.answered_probability(
            confidence.model_probability(params["answer"], short_feats), params
        )
    )
    # The same draft is not rated like a snippet written for the question.
    assert on_documents < confidence.model_probability(params["answer"], long_feats)
    # ... and the critic says which model spoke.
    assert judgement.judge(q, answer, [ev(1, NUT_LISTEN)]).model == "documents"
    assert judgement.judge(q, answer, [ev(1, short)]).model == "development"
    critique = offline.critique(q, answer, [ev(1, NUT_LISTEN)])
    assert critique["confidence_model"] == "documents"
    assert critique["confidence"] == pytest.approx(on_documents, abs=1e-3)
    # What is asked (a count of hours) is in no sentence of the answer: not confident there.
    q = "How many hours does upsd take to apply a new LISTEN address?"
    feats = features(q, answer, [ev(1, NUT_LISTEN)])
    assert feats["asked_missing_cited"] == 1.0
    assert confidence.probabilities(feats)["answer"] < LOW_CONFIDENCE


def test_the_confidence_passes_its_stages_in_order_and_ends_at_the_judges_number() -> None:
    """One pipeline, each stage named: the missing-words cap holds a development draft that
    lacks what is asked at the fitted rate, the LLM's opinion moves it, the answered map
    follows, a dispute passes it on; the last stage is the confidence the critic reports."""
    params = confidence.load_params()
    q = "How many hours does upsd take to apply a new LISTEN address?"
    short = "upsd reads the LISTEN lines of upsd.conf when it starts."
    feats = features(q, f"{short} [1]", [ev(1, short)])
    assert feats["asked_missing_cited"] == 1.0
    stages = confidence.confidence_stages(feats, params)
    assert list(stages) == ["model", "cap", "answered"]
    assert stages["cap"] == min(stages["model"], params["asked_missing_rate"])
    with_llm = confidence.confidence_stages(feats, params, 0.9, disputed=True)
    assert list(with_llm) == ["model", "cap", "opinion", "answered", "dispute"]
    assert with_llm["opinion"] > with_llm["cap"] and with_llm["dispute"] == with_llm["answered"]
    assert list(with_llm) == [s for s in confidence.STAGES if s in with_llm]  # in order
    verdict = judge(q, f"{short} [1]", [ev(1, short)])
    assert list(verdict.stages.values())[-1] == verdict.confidence


@pytest.mark.parametrize(
    ("question", "form"),
    [
        ("How do I save a gnuplot plot as a PNG image?", "how_to"),
        ("How can R read data from an Excel spreadsheet?", "how_to"),
        ("Which command shows the kernel messages on Debian?", "asks_for_code"),
        ("What function reads a fixed-width format file?", "asks_for_code"),
        ("How many datasets are supplied with R?", None),
        ("When were NUT variables renamed?", None),
    ],
)
def test_the_question_form_is_read(question: str, form: str | None) -> None:
    feats = features(question, "", [])
    forms = {f for f in ("how_to", "asks_for_code") if feats[f]}
    assert forms == ({form} if form else set())


def test_agreeing_sources_are_no_dispute() -> None:
    """Two manuals that say the same thing in their own words: no point of opposition, a
    dispute probability under the fitted bar, no conflict review — yet, the bar forced to
    zero, the review would still show both passages, with no invented point of difference."""
    a = ev(1, UPS_SHUTDOWN, doc="user-manual")
    b = ev(
        2,
        "On a low battery state upsmon shuts down the system with SHUTDOWNCMD, and the "
        "POWERDOWNFLAG file makes the init scripts power off the UPS load.",
        doc="developer-guide",
    )
    question = "What does upsmon do on a low battery state?"
    verdict = judge(question, "x [1]", [a, b])
    assert verdict.features["opposed_pair"] == 0.0
    assert verdict.features["topic_pair"] == 1.0
    assert verdict.probabilities["dispute"] < confidence.load_params()["dispute_threshold"]
    assert verdict.conflicts == []
    forced = {**confidence.load_params(), "dispute_threshold": 0.0}
    [shown] = judge(question, "x [1]", [a, b], params=forced).conflicts
    assert shown["reason"] == "the sources report different findings"
    assert [s["doc_id"] for s in shown["sources"]] == ["user-manual", "developer-guide"]


def test_sources_off_the_question_are_never_a_dispute() -> None:
    """Chunks of two manuals that merely sit in one result list are not two positions."""
    a = ev(1, R_INSTALL, doc="R-admin")
    b = ev(2, UPS_SHUTDOWN, doc="user-manual")
    forced = {**confidence.load_params(), "dispute_threshold": 0.0}
    verdict = judge("How do I install R from source?", "x [1]", [a, b], params=forced)
    assert verdict.features["topic_pair"] == 0.0
    assert verdict.conflicts == []


def test_opposite_verdicts_and_dates_are_points_of_opposition() -> None:
    """A favourable and an unfavourable account of one thing, or two dates for one event,
    as an annual report and a grievance filing, or two filings, put them."""
    good = (
        "Under the principal's leadership the school has shown marked improvement, and "
        "graduation rates are the best in a decade."
    )
    bad = (
        "The grievance documents that the principal's leadership has created a toxic and "
        "unsustainable workplace for the school's teachers."
    )
    assert stances.valence(good) > 0 > stances.valence(bad)
    pair = stances.pairs_of(
        "Is the principal effective at improving the school?",
        [ev(1, good, doc="report"), ev(2, bad, doc="grievance")],
    )
    assert pair[0].verdicts and pair[0].opposed
    assert (
        figure_clash(
            "The company's IPO took place on March 22, 2020, with shares priced at $68.",
            "The company completed its IPO on March 15, 2020.",
        )
        == "date: march 22 2020 vs march 15 2020"
    )
    assert figure_clash("Released on 3 May 2021.", "Released on 3 May 2021.") is None


def test_how_many_is_answered_by_a_count_of_the_thing_asked() -> None:
    """ "How many datasets" is answered by "Around 100 datasets", not by a version number
    or a page number elsewhere in a sentence that names the thing."""
    assert question.how_many_of("How many datasets are supplied with R?") == "dataset"
    assert question.asked_in(
        "quantity",
        "How many datasets are supplied with R?",
        "Around 100 datasets are supplied with R (see function data()).",
    )
    assert not question.asked_in(
        "quantity",
        "How many companies use PyTables in production?",
        "PyTables 3.8 is used by companies in production; see page 12 of the guide.",
    )


def test_a_version_of_something_else_does_not_answer_which_version() -> None:
    """R-intro.pdf's first page gives R's version; the question asks which version brought
    the pipe operator. The kind of answer ("version") is not the subject: the version must
    stand by what the question is about."""
    q = "Which R version introduced the pipe operator?"
    assert question.head_stems(q, subject=True) == content_stems("introduced pipe")
    cover = "This manual is for R, version 4.2.2 Patched (2022-11-10)."
    assert not question.asked_in("version", q, cover)
    assert question.asked_in("version", q, "The native pipe operator was introduced in R 4.1.0.")
    critique = offline.critique(q, f"{cover} [1]", [ev(1, cover, score=0.4)])
    assert critique["confidence"] < LOW_CONFIDENCE


def test_a_measure_is_answered_only_by_a_figure_in_its_units() -> None:
    """NUT's user manual names cable part numbers ("940-0024C") on the page about serial
    cables: a figure, but no length. "What is the maximum cable length …?" was 99% on it."""
    q = "What is the maximum cable length for a serial UPS connection?"
    manual = "The 940-0024C cable was not yet understood, so this happened over the serial hack."
    assert not question.asked_in("quantity", q, manual)
    for answer in ("A serial cable can be up to 15 m long.", "Keep the serial cable under 50ft."):
        assert question.asked_in("quantity", q, answer)
    critique = offline.critique(q, f"{manual} [1]", [ev(1, manual, score=0.5)])
    assert critique["confidence"] < LOW_CONFIDENCE
    # Speeds, money at scale and figures of questions that name no unit.
    assert question.measured(("speed", "time"), "exactly 299,792,458 metres per second")
    assert question.measured(("money",), "The budget was set at 14.8 billion pounds.")
    assert question.measured(("money",), "The average cost was $35,000.")
    assert not question.measured(("length",), "It formed 3 million years ago.")
    assert question.dimensions("How many drivers does NUT ship?") == ()
    # A noun naming the measure decides; "how high" alone names no unit.
    assert question.dimensions("How high is the temperature in the boiler?") == ("temperature",)
    assert question.dimensions("How high is the unemployment rate?") == ()
    assert "time" in question.dimensions("What is the length of the warranty?")


def test_a_sentence_capitalised_only_at_its_start_names_nobody() -> None:
    """NUT's user manual on the apcsmart driver: "The", "These" and "Note" open sentences;
    they are not the author "Who wrote …?" asks for."""
    q = "Who wrote the apcsmart driver?"
    history = (
        "The newapc driver has been renamed to apcsmart. These drivers would later be "
        "renamed and recombined. Note that today's apcsmart driver still displays the serial "
        "number when it starts."
    )
    assert not kind_present("name", history, q)
    assert kind_present("name", history + " The apcsmart driver was written by Russell Kroll.", q)


def test_a_neighbouring_subject_leaves_the_question_name_missing() -> None:
    """The question names Germany; the passages name France: a neighbour, not the subject."""
    feats = features(
        "What is the minimum wage in Germany as of 2024?",
        "France's minimum wage was EUR 11.65 per hour in January 2024. [1]",
        [ev(1, "France's minimum wage (SMIC) was EUR 11.65 per hour in January 2024.")],
    )
    assert feats["question_names_missing"] == 1.0
    same = features(
        "What is the minimum wage in France as of 2024?",
        "France's minimum wage was EUR 11.65 per hour in January 2024. [1]",
        [ev(1, "France's minimum wage (SMIC) was EUR 11.65 per hour in January 2024.")],
    )
    assert same["question_names_missing"] == 0.0
    assert same["best_passage_coverage"] > 0.5


def test_when_is_answered_by_a_recurrence_what_year_by_a_date() -> None:
    assert asked_kind("When is the boiler descaled?") == "date"
    assert kind_present(
        "date", "The boiler is descaled once a year.", "When is the boiler descaled?"
    )
    assert not kind_present(
        "date", "The boiler is descaled once a year.", "In which year was the boiler installed?"
    )
    assert kind_present("date", "It was installed in 2011.", "In which year was it installed?")


@pytest.mark.parametrize(
    ("p", "shown"),
    [(0.998, ">99%"), (0.995, ">99%"), (0.994, "99%"), (0.82, "82%"), (0.001, "<1%")],
)
def test_a_probability_is_never_shown_as_certainty(p: float, shown: str) -> None:
    assert percent(p) == shown


def test_the_confidence_is_read_from_the_lead_passage_only() -> None:
    """Confidence is the probability that the lead passage answers: an "Also relevant"
    passage after it, however good, neither raises nor lowers it."""
    q = "How often must the hydraulic pump be inspected?"
    evidence = [
        ev(1, "The hydraulic pump must be inspected every 500 operating hours.", "manual"),
        ev(2, "Boilers are serviced in spring by the plant's own staff.", "plan"),
    ]
    strong = "The hydraulic pump must be inspected every 500 operating hours. [1]"
    weak = "Boilers are serviced in spring by the plant's own staff. [2]"
    alone = judgement.judge(q, weak, evidence).confidence
    followed = judgement.judge(q, f"{weak}\n\n{strong}", evidence).confidence
    assert followed == pytest.approx(alone)
    assert judgement.judge(q, strong, evidence).confidence > alone
    assert judgement.judge(q, f"{strong}\n\n{weak}", evidence).confidence == pytest.approx(
        judgement.judge(q, strong, evidence).confidence
    )
    assert lead_of(f"{weak}\n\n{strong}") == weak


def test_the_lead_chunks_retrieval_scores_are_the_leads_own() -> None:
    """The judge reads how well the lead's own chunk matched the question at retrieval (dense,
    keyword coverage, soft match); a better-matching chunk the lead does not cite does not
    lend it its scores, and on document passages the better match is the more confident."""
    q = "How do I make upsd listen on another port?"
    answer = "Listen on TCP port port instead of the default value. [2]"
    strong = {**ev(1, NUT_LISTEN), "score": 0.8, "coverage": 1.0, "soft": 0.9}
    weak = {**ev(2, NUT_LISTEN), "score": 0.3, "coverage": 0.2, "soft": 0.4}
    feats = features(q, answer, [strong, weak])
    assert (feats["lead_chunk_dense"], feats["lead_chunk_keywords"]) == (0.3, 0.2)
    assert feats["lead_chunk_soft"] == 0.4 and feats["max_soft"] == 0.9
    cited_strong = features(q, answer.replace("[2]", "[1]"), [strong, weak])
    assert cited_strong["lead_chunk_soft"] == 0.9
    assert judgement.judge(q, answer, [strong, weak]).model == "documents"
    assert (
        confidence.probabilities(cited_strong)["answer"] > confidence.probabilities(feats)["answer"]
    )


def test_a_lead_citing_a_web_result_alone_has_no_retrieval_scores_to_read() -> None:
    """A web result has no keyword coverage or soft match, and its score is the search
    service's own: a lead citing it alone is read at the fitted mean of the three lead-chunk
    features (they say nothing), not as a chunk that matched no word of the question."""
    q = "How do I make upsd listen on another port?"
    answer = "Listen on TCP port port instead of the default value. [1]"
    web = {k: v for k, v in ev(1, NUT_LISTEN).items() if k not in ("coverage", "soft")}
    web = {**web, "source": "web", "score": 0.95, "url": "https://example.org/nut"}
    kb = {**ev(2, NUT_LISTEN), "score": 0.4, "coverage": 0.7, "soft": 0.6}
    feats = features(q, answer, [web, kb])
    lead_chunk = ("lead_chunk_dense", "lead_chunk_keywords", "lead_chunk_soft")
    assert not set(lead_chunk) & set(feats)
    assert judgement.judge(q, answer, [web, kb]).model == "documents"
    docs = confidence.load_params()["documents"]
    mean = dict(zip(docs["features"], docs["mean"], strict=True))
    at_mean = {**feats, **{n: mean[n] for n in lead_chunk}}
    unmatched = {**feats, **dict.fromkeys(lead_chunk, 0.0)}
    p = confidence.probabilities(feats)["answer"]
    assert p == pytest.approx(confidence.probabilities(at_mean)["answer"])
    assert p > confidence.probabilities(unmatched)["answer"]
    # a lead citing a document chunk as well reads that chunk's scores, not the web score
    both = features(q, answer.replace("[1]", "[1][2]"), [web, kb])
    assert [both[n] for n in lead_chunk] == [0.4, 0.7, 0.6]


def test_an_answered_drafts_confidence_counts_a_hidden_conflict_and_moves_no_decision() -> None:
    """Over the bar the development model's probability is mapped to how often answering was
    right (a missed dispute counts wrong); the map never takes an answer under the bar and
    leaves drafts under it as they were."""
    params = {"answered": {"a": 0.5, "b": 0.2}}
    bar = confidence.LOW_CONFIDENCE
    assert confidence.answered_probability(0.6, params) == 0.6
    high = confidence.answered_probability(0.97, params)
    assert bar <= high < 0.97
    assert confidence.answered_probability(0.66, params) >= bar
    assert confidence.answered_probability(0.97, {}) == 0.97
    # Monotone: a higher score never reads lower.
    scores = [confidence.answered_probability(p / 100, params) for p in range(50, 100)]
    assert scores == sorted(scores)
    # The shipped map was fitted: an answer the evidence model is sure of reads lower.
    shipped = confidence.load_params()["answered"]
    assert confidence.answered_probability(0.99, {"answered": shipped}) < 0.99
    # With Ollama the model's opinion is stacked first: the map still moves no decision.
    shipped_params = confidence.load_params()
    without = {k: v for k, v in shipped_params.items() if k != "answered"}
    feats = features("How do I install R?", "Run the installer. [1]", [ev(1, R_INSTALL)])
    assert confidence.confidence_model(feats, shipped_params) == "development"
    decisions = set()
    for opinion in (0.01, 0.02, 0.3, 0.6, 0.9, 0.99):
        mapped = confidence.probabilities(feats, shipped_params, opinion)["answer"]
        plain = confidence.probabilities(feats, without, opinion)["answer"]
        assert mapped == pytest.approx(confidence.answered_probability(plain, shipped_params))
        assert (mapped >= bar) == (plain >= bar)
        decisions.add(mapped >= bar)
    assert decisions == {True, False}  # the opinions took the draft to both sides of the bar


def test_two_sources_giving_different_values_of_what_is_asked_clash() -> None:
    """The dispute model, fitted on opinion disputes, let "opened in 1931" and "opened in
    1952" through as one confident answer citing both."""
    when = "When was the Zorblat Bridge opened to traffic?"
    a, b = BRIDGE_A, BRIDGE_B
    assert asked_clash(when, a, b) == "1931 vs 1952"
    assert asked_clash(when, a, a.replace("1931", "1931 and widened in 1952")) is None  # shared
    museum = "The Ulm museum next to it was opened in 1952."  # a year, not of what is asked
    assert asked_clash(when, a, museum) is None
    how_many = "How many passengers does the Ulm ferry carry?"
    ferry = "The Ulm ferry carries 350 passengers."
    assert asked_clash(how_many, ferry, "The ferry carries 420 passengers.") == (
        "350 vs 420 passengers"
    )
    assert asked_clash(how_many, ferry, "The ferry carries 350 passengers and 9 cars.") is None
    # Figures in different units, or the question's own, are no answer against another.
    weight = "How heavy is the Ulm ferry's anchor?"
    assert (
        asked_clash(weight, "The ferry's anchor is 21 kg.", "The anchor weighs 21 kilograms.")
        is None
    )
    of_twelve = "How many of the 12 pumps failed?"
    assert asked_clash(of_twelve, "Of the 12 pumps, 3 failed.", "Of the 12 pumps, 5 failed.") == (
        "3 vs 5 failed"
    )
    assert asked_clash("Who built the Zorblat Bridge?", a, b) is None  # not a year or figure
    evidence: list[Evidence] = [
        {"doc_id": "b", "text": b, "score": 0.9},
        {"doc_id": "a", "text": a, "score": 0.8},
    ]
    feats = features(when, "The bridge was opened to traffic in 1952. [1]", evidence)
    assert feats["asked_clash"] == 1.0
    assert disputed(feats, {"dispute": 0.0}, {"dispute_threshold": 0.9})
    assert judge(when, "", evidence).conflicts == []  # an empty draft disputes nothing


def test_the_document_model_reads_how_clearly_the_section_won() -> None:
    """Issue 51: what separates answerable from unanswerable questions (the best keyword
    match, the section's margin, its keyword and reader scores) is in the one fitted model,
    not a cap stacked on it: the same draft is trusted more when its section won clearly."""
    model = json.loads(confidence.PARAMS_PATH.read_text())["documents"]
    assert {"top_keywords", "section_margin", "section_keywords", "section_meaning"} <= set(
        model["features"]
    )
    mean = dict(zip(model["features"], model["mean"], strict=True))
    clear = confidence.model_probability(model, {**mean, "section_margin": 3.0})
    close = confidence.model_probability(model, {**mean, "section_margin": 0.0})
    assert clear > close
