from ingest.chunking import chunk_pages
from ingest.parsing import Page, clean_text, parse_text
from masis_core.retrieval.quality import QUALITY_THRESHOLD, quality_score


def numbered_pages(words_per_page: list[int]) -> list[Page]:
    """Each word names its page (p3w17) so attribution can be checked word by word."""
    return [
        Page(n, " ".join(f"p{n}w{i}" for i in range(count)))
        for n, count in enumerate(words_per_page, start=1)
    ]


def test_clean_text_joins_hyphenated_line_breaks_and_whitespace() -> None:
    raw = "The config-\nuration file\r\n  lives   here.\x00\n\n\n\nNext para-\n  graph."
    assert clean_text(raw) == "The configuration file\nlives here.\n\nNext paragraph."


def test_clean_text_keeps_real_hyphens_and_pdfium_soft_hyphen_marker() -> None:
    assert clean_text("well-known\nFact") == "well-known\nFact"
    assert clean_text("docu\x02\r\nment") == "document"


def test_chunks_record_the_pages_their_words_came_from() -> None:
    pages = numbered_pages([150, 150, 150])
    chunks = chunk_pages(pages, size=200, overlap=40)
    assert len(chunks) >= 3
    for chunk in chunks:
        seen = {int(w.split("w")[0][1:]) for w in chunk.text.split()}
        assert chunk.page_start == min(seen)
        assert chunk.page_end == max(seen)
    assert chunks[0].page_start == 1
    assert chunks[-1].page_end == 3
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_chunks_overlap_and_cover_every_word() -> None:
    pages = numbered_pages([500])
    chunks = chunk_pages(pages, size=200, overlap=40)
    covered = [w for c in chunks for w in c.text.split()]
    assert set(covered) == set(pages[0].text.split())
    first, second = chunks[0].text.split(), chunks[1].text.split()
    assert first[-40:] == second[:40]


def test_short_tail_is_folded_into_the_last_chunk() -> None:
    chunks = chunk_pages(numbered_pages([210]), size=200, overlap=40)
    assert len(chunks) == 1
    assert chunks[0].word_count == 210


def test_chunks_prefer_to_end_at_a_sentence() -> None:
    sentence = "word " * 19 + "end. "
    chunks = chunk_pages([Page(1, sentence * 30)], size=200, overlap=40)
    assert all(c.text.endswith("end.") for c in chunks)


def test_text_files_split_pages_at_form_feeds() -> None:
    parsed = parse_text(b"first page text\fsecond page\f\f")
    assert [p.number for p in parsed.pages] == [1, 2]
    assert parsed.empty_pages == [3, 4]


def test_quality_score_follows_the_seed_formula() -> None:
    stub = "See also: other things"
    assert quality_score(stub, "other things") == 0.0
    assert quality_score("alpha " * 20) == 0.26
    assert quality_score("alpha " * 400) == 0.8
    long_text = "the turbine blade inspection " * 50
    assert quality_score(long_text, "turbine inspection interval") > quality_score(long_text)
    assert quality_score("word " * 25) < QUALITY_THRESHOLD <= quality_score("word " * 50)


def test_running_headers_and_page_numbers_are_stripped() -> None:
    from ingest.parsing import Page, strip_running_lines

    bodies = ["Seals wear out.", "Valves open at 230 bar.", "Oil is checked.", "Log it.", "End."]
    pages = [
        Page(n, f"Pump Manual (rev. 2) {n} / 5\n{body}\n{roman}")
        for n, body, roman in zip(range(1, 6), bodies, ["i", "ii", "iii", "iv", "v"], strict=True)
    ]
    pages.append(Page(6, "Pump Manual (rev. 2) 6 / 5"))  # nothing but the header
    out = strip_running_lines(pages)
    assert [p.text for p in out] == bodies
    # Two pages are too few to tell a running header from content.
    assert strip_running_lines(pages[:2]) == pages[:2]
