import random
import sys
import unicodedata

from ingest.chunking import MAX_CHUNK_CHARS, chunk_pages
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


def test_clean_text_drops_invisible_format_characters() -> None:
    raw = "as shown [2\u2060] and [\u200b3\u200b]; zero\u200bwidth\ufeff, \u202eltr\u202c"
    assert clean_text(raw + " docu\u00adment") == "as shown [2] and [3]; zerowidth, ltr document"


def test_every_format_character_is_dropped() -> None:
    """The class is built from planes 0, 1 and 14 only; this checks all 17 planes."""
    format_chars = [
        chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"
    ]
    assert len(format_chars) > 150
    assert clean_text("a" + "".join(format_chars) + "b") == "ab"


def no_spaces(text: str) -> str:
    return "".join(text.split())


def test_text_without_spaces_is_cut_into_bounded_chunks_losing_nothing() -> None:
    text = random.Random(7).randbytes(1_000_000).hex()  # 2 MB without a space
    chunks = chunk_pages([Page(1, "intro words here"), Page(2, text), Page(3, "the end")])
    assert max(len(c.text) for c in chunks) <= MAX_CHUNK_CHARS
    assert len(chunks) < 2_000_000 // 3000  # the overlap does not stall the window
    # Every 100-character piece is distinct: in order of first appearance they must spell
    # the document again.
    pieces = dict.fromkeys(piece for c in chunks for piece in c.text.split())
    assert "".join(pieces) == "introwordshere" + text + "theend"
    assert (chunks[0].page_start, chunks[-1].page_end) == (1, 3)
    for chunk in chunks[1:-1]:
        assert (chunk.page_start, chunk.page_end) == (2, 2)


def test_cjk_text_is_chunked_within_the_character_cap() -> None:
    sentence = "液压泵每运行五百小时必须检查一次。"
    pages = [Page(n, sentence * 3000) for n in (1, 2)]  # 51,000 characters a page, no space
    chunks = chunk_pages(pages)
    assert len(chunks) > 20
    assert max(len(c.text) for c in chunks) <= MAX_CHUNK_CHARS
    covered = "".join(no_spaces(c.text) for c in chunks)
    assert covered.count("检查") >= 6000  # every sentence is in some chunk
    assert {(c.page_start, c.page_end) for c in chunks} >= {(1, 1), (1, 2), (2, 2)}


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
    # Empty parts of a text file are blank, not scans: nothing there needs OCR.
    assert (parsed.blank_pages, parsed.empty_pages) == ([3, 4], [])


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
