"""Section first, then the passage inside it (``masis_core.answers.sections``), and the passage
picker's candidates (``graph.reviews.candidates``).

The FAQ text is modelled on the Network UPS Tools FAQ: entries headed by their question, whose
opening answers, next to entries that share the question's words without answering it."""

from __future__ import annotations

import json
import unicodedata

from masis_core.answers import compose as today
from masis_core.answers import sections
from masis_core.answers.offline import paragraph_headings, render_answer
from masis_core.graph.reviews import candidates
from masis_core.state import Evidence
from masis_core.text.sentences import segment

FAQ = (
    "3.1 How do I stop the data stale warning? The data stale warning means the driver has "
    "not heard from the UPS within the allowed interval. Check the cable and restart the "
    "driver with upsdrvctl. If the warning persists, raise the maxage value in upsd.conf so "
    "the server waits longer. "
    "3.2 Can several hosts monitor one UPS? Yes. Any number of hosts can run upsmon against "
    "the same upsd server, as long as each has a user in upsd.users. The primary host shuts "
    "down last. "
    "3.3 Why does my UPS beep? The UPS beeps when it runs on battery. Most models let you "
    "silence the alarm with upscmd. "
    "3.4 Which hosts monitor the UPS in a simple setup? In a simple setup only one host can "
    "monitor the UPS, the one its serial cable is plugged into."
)


def ev(text: str, n: int = 1, page: int = 3, doc: str = "d") -> Evidence:
    return {
        "chunk_id": f"ws/{doc}/{n:06d}",
        "doc_id": doc,
        "filename": f"{doc}.pdf",
        "page_start": page,
        "page_end": page,
        "text": text,
        "score": 0.7,
        "source": "kb",
    }


def lead(answer: str) -> str:
    return answer.split("\n\n", maxsplit=1)[0]


def test_a_faq_entry_is_quoted_from_its_opening_and_whole() -> None:
    """The entry whose question matches is chosen, and its answer quoted from the start:
    today's composer took one sentence out of it and left the remedy out."""
    question = "How do I get rid of the data stale message?"
    answer = render_answer(sections.compose(question, [ev(FAQ)]))
    assert lead(answer).startswith("The data stale warning means the driver")
    assert "raise the maxage value" in lead(answer)
    assert "maxage" not in lead(render_answer(today.compose(question, [ev(FAQ)])))


def test_a_yes_opens_the_entry_it_answers() -> None:
    # Without entry 3.4, whose "only one host can monitor the UPS" (a simple setup) competes:
    # that confusion is not solved (docs/measurements/passages.md).
    faq = FAQ.split("3.4 ", maxsplit=1)[0]
    answer = render_answer(sections.compose("Can more than one computer watch one UPS?", [ev(faq)]))
    assert lead(answer).startswith("Yes. [1] Any number of hosts can run upsmon")


def test_the_options_are_the_sections_second_window_and_the_next_sections_best() -> None:
    """A long section (a manual's) is searched for its best window, and a second one of it is
    offered beside the next section's best."""
    text = (
        "2 Configuring the server. The server reads upsd.conf at start. The file lists the "
        "addresses upsd listens on, one LISTEN line each. The default port is 3493, and "
        "firewalls must let it through from every monitoring host. Logging goes to syslog "
        "under the daemon facility unless the server runs in the foreground. The server keeps "
        "its state in a directory that only its own account may write. Statistics are kept "
        "for each driver and reset when the server restarts. The maximum age of data is set "
        "by MAXAGE, fifteen seconds by default. Access is granted per user in upsd.users, "
        "where each user has a password and a list of actions. Restart upsd after any change "
        "to upsd.users so the new users and their passwords are read. "
        "3 Configuring the monitor. upsmon reads upsmon.conf. Each MONITOR line names a UPS, "
        "the user upsmon logs in as, and its password from upsd.users."
    )
    question = "How does the server grant access per user, with passwords and actions?"
    parts = sections.compose(question, [ev(text)])
    passages = {p["passage"] for p in parts}
    assert passages == {0, 1, 2}
    headings = {p["passage"]: p["heading"] for p in parts}
    assert headings[0] == headings[1] == "2 Configuring the server."
    assert headings[2] == "3 Configuring the monitor."
    texts = [" ".join(p["text"] for p in parts if p["passage"] == n) for n in range(3)]
    assert len({*texts}) == 3  # no sentence is offered twice
    assert not set(texts[0].split(". ")) & set(texts[1].split(". "))


def test_evidence_without_sections_is_composed_as_before() -> None:
    text = (
        "The pump is serviced every 2000 hours. The seals are replaced at each service. "
        "Lunch is served at noon in the canteen."
    )
    question = "How often is the pump serviced?"
    assert sections.compose(question, [ev(text)]) == [
        {**p, "heading": ""} for p in today.compose(question, [ev(text)])
    ]


def test_the_judge_reads_how_clearly_the_section_won() -> None:
    clear = sections.ranking("How do I stop the data stale warning?", [ev(FAQ)])
    vague = sections.ranking("What does the manual say?", [ev(FAQ)])
    assert set(clear) == {"section_margin", "section_keywords", "section_meaning"}
    assert clear["section_margin"] > vague["section_margin"]
    assert sections.ranking("How often?", [ev("The pump is serviced every 2000 hours.")]) == {}


def test_the_picker_offers_each_passage_with_its_heading_and_page_and_flags_a_clash() -> None:
    question = "How many hosts can monitor one UPS?"
    evidence = [ev(FAQ, 1, page=3), ev("Unrelated text.", 2, page=9)]
    draft = (
        "Yes. [1] Any number of hosts can run upsmon against the same upsd server. [1]\n\n"
        "In a simple setup only one host can monitor the UPS. [1]\n\n"
        "Unrelated text. [2]"
    )
    found = candidates(question, draft, evidence, ["3.2 Can several hosts?", "3.4 Which?", ""])
    assert [c["n"] for c in found] == [0, 1, 2]
    assert found[0]["heading"] == "3.2 Can several hosts?"
    assert found[0]["text"].startswith("Yes. Any number")
    assert (found[2]["filename"], found[2]["page"]) == ("d.pdf", 9)
    assert found[2]["clashes"] == []


def test_the_picker_names_two_passages_that_give_different_figures() -> None:
    draft = "The pump runs 250 hours between services. [1]\n\nThe pump runs 500 hours. [2]"
    evidence = [ev("x", 1), ev("y", 2, doc="e")]
    found = candidates("How many hours does the pump run?", draft, evidence, [])
    assert found[0]["clashes"] and found[0]["clashes"][0]["n"] == 1
    assert found[1]["clashes"][0]["n"] == 0
    assert "250" in found[0]["clashes"][0]["why"]


def test_an_option_that_answers_no_is_shown_against_the_lead_not_as_an_answer() -> None:
    # The NUT FAQ in the browser (issue 51): the entry that answers leads, and an option
    # quoted from the same entry says the opposite of the truth out of its context.
    question = "Can more than one computer monitor the same UPS?"
    draft = (
        "Imagine a data room with a bunch of machines all drawing power from the same UPS. "
        "[1] The rest of them just run upsmon. [1]\n\n"
        "It also means only one host can monitor the UPS. [1]\n\n"
        "Set up other systems as clients of these NUT servers. [2]"
    )
    evidence = [ev(FAQ, 1, page=8), ev("Clients of NUT servers.", 2, page=17)]
    found = candidates(question, draft, evidence, ["Why not?", "Why not?", "Dozens"])
    assert [c["n"] for c in found[0]["clashes"]] == [1]
    assert [c["n"] for c in found[1]["clashes"]] == [0, 2]
    assert "only one host can monitor the UPS" in found[1]["clashes"][0]["why"]
    # Asked for a number, the same passages give no yes and no to set side by side.
    worded = candidates("How many hosts can monitor one UPS?", draft, evidence, [])
    assert all(c["clashes"] == [] for c in worded)
    # Two passages that both say no agree.
    both = (
        "A UPS cannot be monitored by more than one computer. [1]\n\n"
        "Only one host can monitor the UPS. [1]"
    )
    assert all(c["clashes"] == [] for c in candidates(question, both, evidence, []))


# Modelled on the Rcpp FAQ (issue 51's held-out set): run-in headings whose title is set as a
# sentence ("1.3. What compiler can I use. On almost all ..."), one whose number a code line
# took in, a question restated under its heading, a reference "FAQ 2.2.1" and a "Note:".
RUN_IN = (
    "1.2. What do I need. Obviously, R must be installed on the machine before anything else. "
    "1.3. What compiler can I use. On almost all platforms, the GNU Compiler Collection has to "
    "be used along with the corresponding g++ compiler. Windows users need the Rtools package "
    "from the site maintained by Duncan Murdoch. "
    "2.1. How do I link against the library. We recommend you use either FAQ 2.1 or FAQ "
    "2.2.1 both which use the Rcpp function LdFlags() to find the library location. "
    "Note: The library location still needs to be provided by the user on older systems. "
    "x.fill(42); Rcpp::List dimnms = 3.8. How can I set matrix row and column names. "
    "Ok, I can create a matrix, but how do I set its row and column names? Pretty much the "
    "same way as in R itself: you define a list with two character vectors and set the "
    "dimnames attribute of the matrix to it."
)
RUN_IN_HEADINGS = {
    "1.2. What do I need",
    "1.3. What compiler can I use",
    "2.1. How do I link against the library",
    "3.8. How can I set matrix row and column names",
}


def test_a_run_in_heading_titles_its_section_and_is_never_quoted() -> None:
    found, headings = today.sectioned_windows("Which compiler can I use?", [ev(RUN_IN)])
    said = {s.text for w in found for s in w.sentences}
    assert set(headings[0]) - {""} == RUN_IN_HEADINGS  # no reference, label nor question
    assert not said & {
        "What do I need.",
        "What compiler can I use.",
        "How can I set matrix row and column names.",
        "Ok, I can create a matrix, but how do I set its row and column names?",
    }
    assert any(s.startswith("On almost all platforms") for s in said)


def test_each_card_is_titled_by_its_section_and_quotes_sentences() -> None:
    for question in (
        "Which compiler do I need on Windows?",
        "How do I set the row names of a matrix?",
        "Where is the library location found?",
    ):
        evidence = [ev(RUN_IN)]
        parts = sections.compose(question, evidence)
        draft = render_answer(parts)
        cards = candidates(question, draft, evidence, paragraph_headings(parts))
        assert cards, question
        for card in cards:
            assert card["title"] in RUN_IN_HEADINGS, (question, card)
            assert card["title"] == card["heading"]
            title = card["heading"].split(" ", 1)[1]
            assert not card["text"].startswith(title), (question, card)
            assert len(card["text"].split()) >= 4


def test_a_passage_said_before_titles_no_card() -> None:
    """``said_once`` drops a passage whose sentences the lead said already: the cards after it
    keep their own headings."""
    said = "The relief valve opens at 8 bar and closes again at 7 bar."
    parts = [
        {"text": said, "citations": [1], "passage": 0, "heading": "2.1 Relief valve"},
        {"text": said, "citations": [1], "passage": 1, "heading": "2.2 Pump"},
        {"text": "The pump is serviced every 2000 hours.", "citations": [2], "passage": 2,
         "heading": "3.1 Service"},
    ]  # fmt: skip
    evidence = [ev(said, 1), ev("The pump is serviced every 2000 hours.", 2, page=5)]
    cards = candidates("When?", render_answer(parts), evidence, paragraph_headings(parts))
    shown = [(c["heading"], c["page"]) for c in cards]
    assert shown == [("2.1 Relief valve", 3), ("3.1 Service", 5)]


def test_a_card_without_a_heading_is_titled_by_its_document() -> None:
    evidence = [ev("The pump is serviced every 2000 hours.", 1, doc="manual")]
    (card,) = candidates("How often?", "The pump is serviced every 2000 hours. [1]", evidence, [])
    assert card["title"] == "manual.pdf"


def test_a_run_in_title_whose_number_was_in_the_chunk_before_still_titles_its_section() -> None:
    text = (
        "How do I use Rcpp in my package. Rcpp has been specifically designed to be used by "
        "other packages, and making a package that uses it depends on the same steps."
    )
    found, headings = today.sectioned_windows("How do I use Rcpp in a package?", [ev(text, 7)])
    assert headings[0] == ["", "How do I use Rcpp in my package"]
    assert {s.text for w in found for s in w.sentences} == {text.split(". ", 1)[1]}
    # The same words at a document's very start are its first sentence, as before.
    found, headings = today.sectioned_windows("How do I use Rcpp?", [ev(text, 0)])
    assert headings[0] == [""]


def test_a_chapter_title_before_a_run_in_heading_is_not_quoted() -> None:
    text = (
        "This restriction comes from both R and Rcpp, which are licensed under the GPL. "
        "Compiling and Linking 2.1. How do I use Rcpp in my package. Rcpp has been "
        "specifically designed to be used by other packages and their authors."
    )
    found, headings = today.sectioned_windows("How do I use Rcpp in a package?", [ev(text, 0)])
    assert headings[0] == ["", "2.1. How do I use Rcpp in my package"]
    said = {s.text for w in found for s in w.sentences}
    assert not {"Compiling and Linking 2.1.", "How do I use Rcpp in my package."} & said
    assert (
        "Rcpp has been specifically designed to be used by other packages and their authors."
        in said
    )


# An entry as the NUT FAQ prints it: its number, a title of two sentences (the outline writes
# "doesn't" where the page has "doesn’t"), then its answers under "Answer 1" and "Answer 2".
THREE = "Why doesn't upsd implement the functionality of upsmon? I have to run THREE programs!"
ENTRY = (
    "Merely having the driver start up is not necessarily an indication of success. "
    "9 Why doesn’t upsd implement the functionality of upsmon? I have to run THREE programs! "
    "Answer 1 We try to follow the tool for the job philosophy. It may mean more programs "
    "running, but the flexibility you get is usually worth it. Imagine a data room with a "
    "bunch of machines all drawing power from the same UPS. The rest of them just run upsmon. "
    "Besides, if upsmon were rolled into upsd, upsd would get even bigger than it is now. "
    "Answer 2 If this really bothers you, write your own program on top of the state sockets. "
    "It won’t work over the network. It also means only one host can monitor the UPS."
)


def stored(text: str, titles: list[tuple[str, str]]) -> str:
    """A chunk's stored sections as ingest writes them: each title starts where its first
    words stand in the text (after the printed number)."""
    words = text.split()
    starts = []
    for n, (first, title) in enumerate(titles):
        at = next(i for i in range(len(words)) if " ".join(words[i:]).startswith(first))
        starts.append([at, 7 + n, title])
    return json.dumps(starts)


def test_a_stored_title_of_two_sentences_heads_its_whole_entry_and_is_never_quoted() -> None:
    """The heading line's number stood before the outline's title, so the heading had been
    read as the section before's, the title's second sentence quoted as the entry's answer,
    and "1 We try to follow ..." (after the label "Answer") taken for a heading that cut the
    entry in two: "Can more than one computer monitor the same UPS?" led with "I have to run
    THREE programs to monitor my UPS!"."""
    evidence = [
        {**ev(ENTRY, 14), "sections": stored(ENTRY, [("Merely", "Which cable?"), ("Why", THREE)])}
    ]
    question = "Can more than one computer monitor the same UPS?"
    found, headings = today.sectioned_windows(question, evidence)
    entry = [s for s in sections.group(found, headings) if s.heading == THREE]
    assert len(entry) == 1 and entry[0].sentences[0].text.startswith("We try to follow")
    said = {s.text for w in found for s in w.sentences}
    assert not any("THREE" in t or "Why doesn" in t for t in said)
    answer = render_answer(sections.compose(question, evidence))
    assert "I have to run THREE" not in answer
    assert "The rest of them just run upsmon." in answer


def test_a_program_named_in_lower_case_may_open_a_sentence() -> None:
    """ "upsd refuses ..." was debris, and it cut the data-stale entry's opening off from its
    remedy; a fragment or code in lower case stays what it was."""
    text = (
        "It means your UPS driver hasn’t updated things in a little while. upsd refuses to "
        "serve up data that isn’t fresh, so you get the errors about staleness. If this "
        "happens to you, make sure your driver is still running. Note: some drivers need "
        "more time. is.factor is generic and works."
    )
    found = [(s.kind, s.text) for s in segment(text)]
    assert ("sentence", "upsd refuses to serve up data that isn’t fresh, so you get the errors "
            "about staleness.") in found  # fmt: skip
    assert ("debris", "some drivers need more time.") in found
    assert ("debris", "is.factor is generic and works.") in found


def test_a_stored_title_in_decomposed_letters_still_heads_its_entry() -> None:
    """The outline may write "é" as "e" and a combining accent where the page has one letter:
    the title is still recognised on the page, and neither of its sentences is quoted."""
    title = unicodedata.normalize(
        "NFD", "Why doesn't the café daemon monitor? I have to run THREE programs!"
    )
    text = ENTRY.replace(
        "9 Why doesn’t upsd implement the functionality of upsmon? I have to run THREE programs!",
        "9 Why doesn’t the café daemon monitor? I have to run THREE programs!",
    )
    evidence = [
        {**ev(text, 14), "sections": stored(text, [("Merely", "Which cable?"), ("Why", title)])}
    ]
    answer = render_answer(
        sections.compose("Can more than one computer monitor the same UPS?", evidence)
    )
    assert "THREE" not in answer and "café" not in answer
    assert "The rest of them just run upsmon." in answer
