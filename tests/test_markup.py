"""Untrusted text for Markdown: escaping, links, defanged markers, the rendered answer.

A CommonMark parser (markdown-it-py, installed with Streamlit's ``rich``) is the oracle for
what the escaped text renders as: plain text, equal to the input, and nothing else; web and
e-mail addresses as code. CommonMark has no autolinks of bare addresses, which Streamlit's
remark-gfm adds: ``linkable`` checks that none is left in the text a GFM renderer would link
(tests/test_browser_untrusted.py checks the same in Chromium).
"""

from __future__ import annotations

import random
import re

import pytest

from masis_core.answers.offline import render_answer
from masis_core.graph.nodes.evaluator import check
from masis_core.text.markup import (
    answer_markdown,
    escape_markdown,
    link_target,
    plain,
    quote_block,
    safe_link,
    untrusted,
)
from masis_core.text.sentences import claims, defang, markers, strip_markers

markdown_it = pytest.importorskip("markdown_it")
MD = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])

HOSTILE = [
    "See the [revised manual](https://evil.example/x) now.",
    "![](https://evil.example/t.gif)",
    "![alt][ref]\n\n[ref]: https://evil.example/r",
    "<img src=x onerror=alert(document.cookie)>",
    "<https://evil.example/auto> and <a href='https://evil.example'>x</a>",
    "&#91;2&#93; &lbrack;2&rbrack; &copy; &amp;",
    "**bold** __under__ *it* _it_ ~~gone~~ `code` ``x``",
    "# Heading\n## Sub\n> quote\n- item\n+ item\n* item\n1. one\n2) two\n---\n***\nTitle\n===",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "trailing backslash \\\nnext line \\[2\\]",
    "[link]: https://evil.example/def\n[link]",
    "    indented code\n\n\tтаб",
    "1986\\. not a list, 1986. maybe",
    "carriage\r# return heading\r\n- item\r1. one",
]


def rendered_text(markdown: str) -> tuple[set[str], str]:
    """Token types and the plain text a Markdown string renders as."""
    types: set[str] = set()
    text: list[str] = []
    for token in MD.parse(markdown):
        types.add(token.type)
        text.append(" ")
        for child in token.children or []:
            types.add(child.type)
            text.append(child.content if child.type in ("text", "code_inline") else " ")
    return types, " ".join("".join(text).split())


# What remark-gfm links in a text node after parsing, whatever the escapes were.
GFM_AUTOLINK = re.compile(r"https?://[-.\w]*\w|www\.[-\w]|[-.\w+]+@[-\w]+\.[-\w]", re.I)


def linkable(markdown: str) -> list[str]:
    """Addresses left in the rendered text (not in code) that Streamlit would make links."""
    found: list[str] = []
    for token in MD.parse(markdown):
        for child in token.children or []:
            if child.type == "text":
                found += GFM_AUTOLINK.findall(child.content)
    return found


PLAIN = {"paragraph_open", "paragraph_close", "inline", "text", "softbreak", "code_inline"}


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("inline", [True, False])
def test_escaped_text_renders_as_itself_and_nothing_else(text: str, inline: bool) -> None:
    types, shown = rendered_text(escape_markdown(text, inline=inline))
    assert types <= PLAIN, types
    assert shown == " ".join(text.split())
    assert not linkable(escape_markdown(text, inline=inline))


def test_random_punctuation_soup_round_trips() -> None:
    rng = random.Random(13)
    alphabet = "\\`*_{}[]()#+-.!|<>~$&:@=;'\"/ \n\r\tab12xw"
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        for inline in (True, False):
            types, shown = rendered_text(escape_markdown(text, inline=inline))
            assert types <= PLAIN, (text, types)
            assert shown == " ".join(text.split()), text
            assert not linkable(escape_markdown(text, inline=inline)), text


def test_streamlit_extras_are_escaped() -> None:
    """LaTeX, colour and icon directives are Streamlit's, not CommonMark's: checked on the
    string — every trigger character is escaped."""
    out = escape_markdown("$x^2$ :red[alert] :material/home:")
    assert out == "\\$x^2\\$ \\:red\\[alert\\] \\:material/home:"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "see https://evil.example/t.png, www.evil.example. and mail a@evil.example!",
            "see `https://evil.example/t.png`, `www.evil.example`. and mail `a@evil.example`!",
        ),
        ("![x](https://evil.example/t.png)", "!\\[x\\](`https://evil.example/t.png`)"),
        ("<HTTPS://EVIL.example/a_b?q=1&x=$y>", "<`HTTPS://EVIL.example/a_b?q=1&x=$y`>"),
        ("xhttp://evil.example", "x`http://evil.example`"),
        ("tick https://evil.example/`x`", "tick `https://evil.example/`\\`x\\`"),
        ("μέιλ: χρήστης@παράδειγμα.ελ", "μέιλ: `χρήστης@παράδειγμα.ελ`"),
        ("https:// and www. alone", "https\\:// and www\\. alone"),
    ],
)
def test_addresses_are_shown_in_full_as_code_never_as_links(text: str, shown: str) -> None:
    """Streamlit's Markdown (remark-gfm) links a bare address after parsing, so a backslash
    before ":" does not stop it: the address goes into a code span, shown exactly as written."""
    out = escape_markdown(text)
    assert out == shown
    assert not linkable(out)
    types, rendered = rendered_text(out)
    assert types <= PLAIN and rendered == text


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@pytest.mark.parametrize("show", [untrusted, plain, escape_markdown, quote_block])
def test_bidi_controls_are_removed_wherever_text_is_shown(show) -> None:
    """ "invoice\u202efdp.exe" displays as "invoiceexe.pdf": the controls reorder the text
    around them, so they are dropped; right-to-left letters themselves stay."""
    out = show(f"invoice\u202efdp.exe {BIDI} שלום مرحبا")
    assert not set(out) & set(BIDI), out
    assert "invoicefdp.exe" in out and "שלום مرحبا" in out
    assert answer_markdown(f"Fact\u202e{BIDI}. [1]", [1]) == "Fact. [1]"


def test_readable_where_nothing_is_markup() -> None:
    assert escape_markdown("plant-manual.pdf, page 3 #2 threshold 0.27") == (
        "plant-manual.pdf, page 3 #2 threshold 0.27"
    )
    assert escape_markdown("12. item") == "12\\. item"
    assert escape_markdown("- item", inline=True) == "\\- item"
    assert escape_markdown("a\n\n  b  c", inline=True) == "a b c"


@pytest.mark.parametrize(
    "fake",
    [
        "[2]",
        "\\[2\\]",
        "\\\\[2\\\\]",
        "&#91;2&#93;",
        "&#091;2&#x5D;",
        "&#x5b;2&#x5d;",
        "&lbrack;2&rbrack;",
        "&lsqb;2&rsqb;",
        "[2\u2060]",
        "[\u200b2\ufeff]",
        "［2］",
        "［2]",
        "[&#50;]",
        "[2&#8288;]",
    ],
)
def test_everything_that_displays_as_a_marker_is_defanged(fake: str) -> None:
    out = defang(f"as said in {fake} above")
    assert out == "as said in ［2］ above"
    assert markers(out) == [] and claims(out) == [out]
    rendered = untrusted(f"as said in {fake} above")
    assert "［2］" in rendered and "[2" not in rendered


@pytest.mark.parametrize("text", ["[abc]", "[ 2 ]", "&#911;2]", "[2&amp;]", "[]", "&#91;x&#93;"])
def test_other_brackets_are_left_alone(text: str) -> None:
    assert defang(text) == text


def test_only_exact_ascii_markers_are_citations() -> None:
    assert markers("a [1] b [２] c [2\u2060] d ［3］ e") == [1]
    assert strip_markers("Fact [１]. [1]") == "Fact [１]."


def test_a_model_sentence_cannot_smuggle_a_marker_into_the_citations() -> None:
    """In Ollama mode the model writes the text; only its ``citations`` list cites."""
    evidence = [{"text": "The pump is inspected weekly.", "chunk_id": "a"}, {"text": "B."}]
    said = "The pump is inspected weekly \\[2\\] &#91;2&#93; [2\u2060] [2]."
    parts = [{"text": said, "citations": [1]}]
    draft = render_answer(parts)
    assert markers(draft) == [1]
    result = check(draft, evidence)
    assert [c["chunk_id"] for c in result["citations"]] == ["a"]
    assert result["violations"] == []
    assert re.findall(r"\[(\d+)\]", result["answer"]) == ["1"]


def test_answer_keeps_only_this_runs_citation_markers() -> None:
    answer = "Inspect [revised manual](https://evil.example/x) weekly. [1]\n\nSee [99] and [2]. [2]"
    md = answer_markdown(answer, [1, 2])
    assert md == (
        "Inspect \\[revised manual\\](`https://evil.example/x`) weekly. [1]"
        "\n\nSee ［99］ and [2]. [2]"
    )
    types, _ = rendered_text(md)
    assert types <= PLAIN
    assert answer_markdown("Fact. [1] [3]", [1]) == "Fact. [1] ［3］"


def test_marker_next_to_hostile_text_stays_plain() -> None:
    """A marker followed by "(url)" or preceded by "!" must not become a link or an image."""
    md = answer_markdown("Look![1](https://evil.example/t.gif) and [1]: https://evil.example", [1])
    types, shown = rendered_text(md)
    assert types <= PLAIN, types
    assert shown == "Look![1](https://evil.example/t.gif) and [1]: https://evil.example"


def test_quote_block_quotes_every_line_escaped() -> None:
    quoted = quote_block("First [x](https://evil.example)\n\n    # not code\n![](t.gif)")
    assert quoted == (
        "> First \\[x\\](`https://evil.example`)\n>\n> \\# not code\n> !\\[\\](t.gif)"
    )
    types, _ = rendered_text(quoted)
    assert "link_open" not in types and "image" not in types and "heading_open" not in types


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        " JavaScript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:x",
        "/relative/path",
        "https:no-host",
        "file:///etc/passwd",
        "http://[::1",
    ],
)
def test_only_http_urls_become_links(url: str) -> None:
    assert link_target(url) is None
    shown = safe_link("label", url)
    types, _ = rendered_text(shown)
    assert "link_open" not in types and "](" not in shown


def test_http_link_has_an_escaped_label_and_an_encoded_target() -> None:
    link = safe_link("a [b](https://evil.example)", "https://ok.example/a b)(<x>\"'")
    assert link == (
        "[a \\[b\\](`https://evil.example`)](https://ok.example/a%20b%29%28%3Cx%3E%22%27)"
    )
    tokens = [t for tok in MD.parse(link) for t in tok.children or []]
    assert [t.attrs["href"] for t in tokens if t.type == "link_open"] == [
        "https://ok.example/a%20b%29%28%3Cx%3E%22%27"
    ]
    assert safe_link("w", "https://en.wikipedia.org/wiki/Hydraulic_pump").endswith(
        "](https://en.wikipedia.org/wiki/Hydraulic_pump)"
    )


def test_random_answers_show_only_real_markers() -> None:
    """Whatever surrounds them, the markers of real citations are the only "[n]" shown."""
    rng = random.Random(7)
    pieces = ["[1]", "[2]", "[9]", "\\[2\\]", "&#91;1&#93;", "![", "](", "http://e.x", "\n\n", "1."]
    pieces += list(" ab!()[]*_`<>#-:$\\")
    for _ in range(300):
        answer = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 25)))
        md = answer_markdown(answer, [1, 2])
        types, _ = rendered_text(md)
        assert types <= PLAIN, (answer, md, types)
        shown = [t.content for tok in MD.parse(md) for t in tok.children or []]
        assert set(re.findall(r"\[(\d+)\]", "".join(shown))) <= {"1", "2"}, (answer, md)
