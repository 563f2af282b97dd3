"""Offline answer composition: PDF structure is never quoted, cut sentences are completed or
dropped, the best passage leads and off-topic sentences stay out.

The texts are modelled on the Debian manuals (R FAQ-style numbered headings, NUT revision
tables, AsciiDoc tables of contents) and go through the real parser and chunker."""

from __future__ import annotations

import re

import pytest

from ingest.chunking import chunk_pages
from ingest.parsing import Page, parse_bytes
from masis_core.answers.compose import compose, passages
from masis_core.answers.offline import extract_answer, render_answer
from masis_core.state import Evidence
from masis_core.text.sentences import (
    claims,
    ends_as_promised,
    prose_with_code,
    segment,
    sentences,
)
from tests.pdfs import make_pdf


def kinds(text: str, **cut: bool) -> list[tuple[str, str]]:
    return [(s.kind, s.text) for s in segment(text, **cut)]


def sentences_of(text: str, **cut: bool) -> list[str]:
    return [t for k, t in kinds(text, **cut) if k == "sentence"]


# --- the segmenter, one structure at a time ---------------------------------------------------


def test_a_numbered_question_heading_is_split_off() -> None:
    text = (
        "Packages are downloaded from CRAN. 5.2 How can add-on packages be installed? "
        "Add-on packages are installed with install.packages() from within R."
    )
    assert kinds(text) == [
        ("sentence", "Packages are downloaded from CRAN."),
        ("heading", "5.2 How can add-on packages be installed?"),
        ("sentence", "Add-on packages are installed with install.packages() from within R."),
    ]


@pytest.mark.parametrize(
    ("text", "heading", "body"),
    [
        (
            "for experts only. 11.2 Linear models The basic function for fitting ordinary "
            "multiple models is lm().",
            "11.2 Linear models",
            "The basic function for fitting ordinary multiple models is lm().",
        ),
        (
            "is reserved. 9.8.3 Data redundancy Software RAID systems offered by the Linux "
            "kernel provide data redundancy.",
            "9.8.3 Data redundancy",
            "Software RAID systems offered by the Linux kernel provide data redundancy.",
        ),
        (
            "done by root. B.3.4 Making manuals The default settings for making the manuals "
            "are controlled by R_PAPERSIZE.",
            "B.3.4 Making manuals",
            "The default settings for making the manuals are controlled by R_PAPERSIZE.",
        ),
        (
            "flags, rating); 4.8.2 Setting flags Some variables have special properties.",
            "4.8.2 Setting flags",
            "Some variables have special properties.",
        ),
        (
            "this chapter. 8.3 on.exit A function can insert a call to on.exit at any point.",
            "8.3 on.exit",
            "A function can insert a call to on.exit at any point.",
        ),
    ],
)
def test_a_heading_glued_to_its_first_sentence_is_split_off(
    text: str, heading: str, body: str
) -> None:
    found = kinds(text)
    assert ("heading", heading) in found
    assert body in sentences_of(text)
    assert not any(heading in s for s in sentences_of(text))


def test_prose_that_starts_with_a_version_number_is_not_a_heading() -> None:
    text = "1.4 servers have a compatibility mode where they answer queries for both names."
    assert sentences_of(text) == [text]


def test_table_of_contents_lines_are_never_sentences() -> None:
    text = (
        "Contents 1 APC 1 1.1 940-0024C clone . . . . . . . . . . . . . . 1 "
        "1.2 940-0024E clone . . . . . . . . . . . . . . 1 2 Belkin 2"
    )
    assert sentences_of(text) == []
    assert "toc" in {k for k, _ in kinds(text)}


def test_a_revision_table_is_never_a_sentence() -> None:
    text = (
        "REVISION HISTORY NUMBER DATE DESCRIPTION NAME 2.8.0 2023-01-25 Current release of "
        "Network UPS Tools (NUT). 2.6.0 2011-01-14 First release of AsciiDoc documentation "
        "for Network UPS Tools (NUT)."
    )
    assert sentences_of(text) == []
    assert {k for k, _ in kinds(text)} == {"table"}


def test_table_cells_and_captions_are_not_sentences() -> None:
    cells = "Signal PC NMC 1,4,6 TxD 2 3 RxD 3 6 GND 5 4 7,8 shield shield"
    assert sentences_of(cells) == []
    row = (
        "Server version Client version 1.0 1.2 1.4 2.0+ 1.0 yes yes yes no 1.2 yes yes yes no "
        "1.4 yes yes yes yes."
    )
    assert sentences_of(row) == []
    caption = (
        "Table 1.9: List of types of timestamps Note The noatime mount option improves the "
        "read performance."
    )
    assert ("heading", "Table 1.9: List of types of timestamps") in kinds(caption)
    assert sentences_of(caption) == ["The noatime mount option improves the read performance."]


def test_running_headers_are_removed_even_inside_a_sentence() -> None:
    text = (
        "The file collects the rows of our table and will be 1.3. Tutorials 21 saved to disk "
        "when it is closed. Chapter 2: Installing R under Unix-alikes 9 2.5 Uninstallation "
        "You can uninstall R by make uninstall."
    )
    assert sentences_of(text) == [
        "The file collects the rows of our table and will be saved to disk when it is closed.",
        "You can uninstall R by make uninstall.",
    ]
    headers = [t for k, t in kinds(text) if k == "header"]
    assert headers == ["1.3. Tutorials 21", "Chapter 2: Installing R under Unix-alikes 9"]


def test_list_markers_and_labels_are_dropped_from_their_items() -> None:
    text = (
        "• Reading a file changes the atime attribute of the file. • Overwriting a file "
        "changes the mtime attribute. 1. Precision Most of the conversions are done to full "
        "precision. Tip See Section 9.3.4 to customize the output."
    )
    assert sentences_of(text) == [
        "Reading a file changes the atime attribute of the file.",
        "Overwriting a file changes the mtime attribute.",
        "Most of the conversions are done to full precision.",
        "See Section 9.3.4 to customize the output.",
    ]


def test_a_promised_list_is_quoted_with_its_items() -> None:
    # A policy extract as a chunk holds it (line ends folded): the items carry no full stop,
    # so neither they nor the promise alone were quotable, and the question got no answer.
    policy = (
        "PCI DSS v4.0 Requirement 8.3.6 - Password/Passphrase Requirements: If passwords are"
        " used as an authentication factor, they must meet the following: - Minimum length of"
        " 12 characters - Contain both numeric and alphabetic characters - Changed at least once"
        " every 90 days Source: Payment Card Industry Data Security Standard v4.0, March 2022"
    )
    quoted = sentences_of(policy)
    assert quoted == [
        "If passwords are used as an authentication factor, they must meet the following: -"
        " Minimum length of 12 characters - Contain both numeric and alphabetic characters -"
        " Changed at least once every 90 days"
    ]
    assert ends_as_promised(quoted[0])
    # NUT's user manual, page 45: the programs to run per system type. The last item runs
    # into the next sentence (no full stop between them in the PDF) and is left out.
    nut = (
        "Once you identify a system’s type, use this list to decide which of the programs need"
        " to be run for monitoring: • A: driver and upsd • B: upsmon (in secondary mode) • C:"
        " driver, upsd, and upsmon (in primary mode, as the UPS manager) To further complicate"
        " things, you can have a system that is hooked to multiple UPSes, but only depends on"
        " one for power."
    )
    assert sentences_of(nut)[0] == (
        "Once you identify a system’s type, use this list to decide which of the programs need"
        " to be run for monitoring: • A: driver and upsd • B: upsmon (in secondary mode)"
    )
    # A running header inside an item (a page break) is not quoted with it.
    paged = (
        "Each password must meet the following: - Minimum length of 12 characters - Contain"
        " both numeric Chapter 8: Security 212 and alphabetic characters - Changed at least"
        " once every 90 days"
    )
    assert sentences_of(paged)[0] == (
        "Each password must meet the following: - Minimum length of 12 characters - Contain"
        " both numeric and alphabetic characters"
    )
    # A dash inside a sentence sets off no item.
    assert sentences_of("The limit - as the vendor notes - is 12 characters.") == [
        "The limit - as the vendor notes - is 12 characters."
    ]


def test_a_numbered_list_without_full_stops_lends_no_item_its_next_number() -> None:
    # The Debian reference, page 73, as a chunk holds it (line ends folded): the items carry
    # no full stop, so each used to end at the next item's number ("Unpack fetched binary
    # packages 5." was quoted as a sentence).
    debian = (
        "or ”apt-get upgrade” and ”apt-get dist-upgrade”): 1. Choose candidate version which"
        " is usually the latest available version for all installed packages (see Section"
        " 2.7.3 for exception) 2. Make package dependency resolution 3. Fetch selected binary"
        " packages from remote archive if candidate version is different from installed"
        " version 4. Unpack fetched binary packages 5. Run preinst script 6. Install binary"
        " files 7. Run postinst script. The aptitude command works the same way."
    )
    quoted = sentences_of(debian)
    assert not any(re.search(r"\s\d\.$|: 1\.$", s) for s in quoted), quoted
    assert "The aptitude command works the same way." in quoted
    # PyTables' install steps: item 1 holds sentences and commands, item 2 follows a command.
    pytables = (
        "1. Run this command from the main PyTables distribution directory: $ python3 setup.py"
        " build Note: AVX2 support is detected automatically for your machine. In that case,"
        " define the DISABLE_AVX2 environment variable: $ DISABLE_AVX2=True python3 setup.py"
        " build # for bash and its variants 2. To run the test suite, execute any of these"
        " commands."
    )
    assert sentences_of(pytables)[-2:] == [
        "In that case, define the DISABLE_AVX2 environment variable: $ DISABLE_AVX2=True"
        " python3 setup.py build # for bash and its variants",
        "To run the test suite, execute any of these commands.",
    ]
    # A figure that ends a sentence stays its own, also after a list's number.
    assert sentences_of("Step 1. Open the lid. The fuse is at 2. Then close it.")[-2:] == [
        "The fuse is at 2.",
        "Then close it.",
    ]
    assert sentences_of("The count rose to 5. This shows growth.") == [
        "The count rose to 5.",
        "This shows growth.",
    ]


def test_abbreviations_and_initials_do_not_end_sentences() -> None:
    text = "From D. Stimits the cable works, e.g. Windows users can use it too."
    assert sentences_of(text) == [text]


@pytest.mark.parametrize(
    "sentence",
    [
        "On almost all platforms a C99 compiler, e.g. GCC or Clang, builds the package.",
        "Prices vary by region, i.e. Europe pays more than America for the same licence.",
        "The defaults are drawn in Fig. 3 and listed in Table No. 4 of the manual.",
        "The method was first described by J. R. Smith in his paper on sorting.",
        "Read the notes first, cf. Section 3 of the manual for the details of each.",
        "The match Apples vs. Oranges is a classic comparison in the literature.",
        "Fruits, vegetables, etc. are sold in the market every morning of the week.",
    ],
)
def test_the_claim_splitter_does_not_end_a_sentence_at_an_abbreviation(sentence: str) -> None:
    """``sentences`` (claims, stances, the judge's reading) reads abbreviations as ``segment``
    does: "e.g." had cut a quoted sentence in two."""
    text = f"{sentence} It ends here. And the next one starts."
    assert sentences(text) == [sentence, "It ends here.", "And the next one starts."]
    assert claims(f"{sentence} [1]") == [f"{sentence} [1]"]


def test_a_title_block_and_its_authors_are_not_a_sentence() -> None:
    """R-intro.pdf's cover and copyright page as the parser reads them: the title, the
    authors' initials and the copyright lines run into the prose with no full stop."""
    cover = (
        "An Introduction to R Notes on R: A Programming Environment for Data Analysis and "
        "Graphics Version 4.2.2 Patched (2022-11-10) W. N. Venables, D. M. Smith and the R "
        "Core Team This manual is for R, version 4.2.2 Patched (2022-11-10). Copyright c 1990 "
        "W. N. Venables Copyright c 1992 W. N. Venables & D. M. Smith Copyright c 1999–2022 R "
        "Core Team Permission is granted to make and distribute verbatim copies of this manual "
        "provided the copyright notice and this permission notice are preserved on all copies."
    )
    found = kinds(cover)
    assert [t for k, t in found if k == "sentence"] == [
        "This manual is for R, version 4.2.2 Patched (2022-11-10).",
        "Permission is granted to make and distribute verbatim copies of this manual provided "
        "the copyright notice and this permission notice are preserved on all copies.",
    ]
    assert ("heading", cover[: cover.index(" This manual")]) in found
    # Names in quotes, products and initials inside a sentence leave it whole.
    for text in (
        "See the ‘Writing R Extensions’ and ‘R Installation and Administration’ manuals for "
        "how to create and install packages.",
        "Network UPS Tools supports the APC Back-UPS Pro and Eaton Powerware units.",
        "The package was written by W. N. Venables and D. M. Smith in 1992.",
    ):
        assert sentences_of(text) == [text]


def test_code_after_a_colon_is_not_glued_to_the_next_sentence() -> None:
    text = (
        "A streamlined version of the call is as follows: > fit <- lm(formula, data = d) "
        "The value of lm() is a fitted model object."
    )
    # The promise keeps the code it promises; the next sentence starts after the code.
    assert sentences_of(text) == [
        "A streamlined version of the call is as follows: > fit <- lm(formula, data = d)",
        "The value of lm() is a fitted model object.",
    ]
    # The Debian reference: the command after "by the following." is the answer to "How do
    # I change the default editor?"; alone, the sentence promised it and the command was
    # dropped. A promise before prose stays a sentence of its own.
    debian = (
        "You can change it by the following. $ sudo update-alternatives --config editor The "
        "choice of vim.basic over vim.tiny is my recommendation for newbies."
    )
    assert sentences_of(debian) == [
        "You can change it by the following. $ sudo update-alternatives --config editor",
        "The choice of vim.basic over vim.tiny is my recommendation for newbies.",
    ]
    assert sentences_of("Proceed as follows. Open the lid and check the fuse.") == [
        "Proceed as follows.",
        "Open the lid and check the fuse.",
    ]
    # Such a quote is complete without a full stop; a sentence cut off is not.
    assert ends_as_promised(sentences_of(debian)[0])
    assert not ends_as_promised("To retrieve the tree, use the following command")


def test_a_url_broken_across_lines_does_not_end_a_sentence() -> None:
    """R-intro.pdf breaks "https://CRAN.R-project.org/package=boot" after "CRAN.": the
    sentence split there, and the answer quoted one starting "R-project.org/package=boot)"."""
    text = (
        "To load a particular package (e.g., the boot (https://CRAN. R-project.org/package=boot)"
        " package containing functions from Davison & Hinkley (1997)), use library(boot). "
        "Mirrors are listed at https://cran.r-project.org. Each mirror holds a full copy."
    )
    assert sentences_of(text)[0] == text[: text.index(" Mirrors")]
    assert sentences_of(text)[-1] == "Each mirror holds a full copy."


def test_a_reference_entry_keeps_its_term() -> None:
    """R-intro.pdf's graphics reference as the parser reads it: the calls, then what they do
    in a sentence without a subject. Split at "Produces", the answer to "Which function
    produces a histogram?" named no function."""
    text = (
        "The third form plots the quantiles of x against those of y to compare their "
        "distributions. hist(x) hist(x, nclass=n) hist(x, breaks=b, ...) Produces a histogram "
        "of the numeric vector x. A sensible number of classes is usually chosen. print(x) "
        "The value is printed."
    )
    assert sentences_of(text) == [
        "The third form plots the quantiles of x against those of y to compare their "
        "distributions.",
        "hist(x) hist(x, nclass=n) hist(x, breaks=b, ...) Produces a histogram of the "
        "numeric vector x.",
        "A sensible number of classes is usually chosen.",
        # A sentence with a subject is not the entry of the code before it.
        "The value is printed.",
    ]


def test_a_sentence_ends_before_the_next_entrys_code_name() -> None:
    """R's reference manual runs its entries together: "... of level NA. is.factor is
    generic ..." was quoted as one sentence about two topics (a browser answer on missing
    values), as was an argument's description with the next argument's name. A short word in
    capitals ("NA.") ends a sentence before a lower-case code name, which opens no prose of
    its own; an abbreviation before one does not end it."""
    assert kinds(
        "Missing values are printed as <NA>, identical to entries of level NA. is.factor is "
        "generic: you can write methods to handle specific classes of objects."
    ) == [
        ("sentence", "Missing values are printed as <NA>, identical to entries of level NA."),
        (
            "debris",
            "is.factor is generic: you can write methods to handle specific classes of objects.",
        ),
    ]
    assert sentences_of(
        "The default is equivalent to y = x (but more efficient). na.rm logical. Should "
        "missing values be removed?"
    ) == [
        "The default is equivalent to y = x (but more efficient).",
        "Should missing values be removed?",
    ]
    assert sentences_of("Use a test such as e.g. is.na(x) on the column. It returns TRUE.") == [
        "Use a test such as e.g. is.na(x) on the column.",
        "It returns TRUE.",
    ]
    # An inline list's letter is no sentence's last word.
    assert sentences_of("Options are a. np.mean and b. np.median for the centre.") == [
        "Options are a. np.mean and b. np.median for the centre."
    ]
    # A dotted name that a line break split is one name, not two sentences.
    assert sentences_of("Read it with the tables.File. get_file_image() method. It is fast.") == [
        "Read it with the tables.File. get_file_image() method.",
        "It is fast.",
    ]


def test_prose_with_figures_statistics_and_enumerations_stays_whole() -> None:
    """Real manual text the segmenter used to break or drop: a figure read as a section
    number ("Values of 2 to 4" split at "2 to"), a sentence without a function word, a
    statistic's "=" taken for code, an enumeration after a colon taken for a list."""
    nut = (
        "The version numbers work like this: if the middle number is odd, it’s a development "
        "tree, otherwise it is the stable tree. The past stable trees were 1.0, 1.2, 1.4, 2.0, "
        "2.2 and 2.4, with the latest stable tree designated 2.6."
    )  # NUT user manual, 2.13
    rd = (
        "m The power used the target for promax. Values of 2 to 4 are recommended. normalize "
        "logical. Should Kaiser normalization be performed?"
    )  # R reference manual, varimax
    aic = "Only k = 2 gives the genuine AIC: k = log(n) is sometimes referred to as BIC or SBC."
    debian = "9.11.2 Virtualization work flow Note Default Debian kernels support KVM since lenny."
    pslatex = (
        "The pslatex driver offers a special way of controlling text positioning: (a) If any "
        "text string begins with ’{’, you also need to include a ’}’ at the end of the text. "
        "(b) If the text string begins with ’[’, you need to continue it with a position."
    )  # gnuplot
    assert sentences_of(nut) == [nut[: nut.index(" The past")], nut[nut.index("The past") :]]
    assert "Values of 2 to 4 are recommended." in sentences_of(rd)
    assert sentences_of(aic) == [aic]
    assert sentences_of(debian) == ["Default Debian kernels support KVM since lenny."]
    assert sentences_of(pslatex) == [
        pslatex[: pslatex.index(" (b)")],
        "If the text string begins with ’[’, you need to continue it with a position.",
    ]
    # The same in a report's prose: quantities, "U.S." before a name, terse notes, sums.
    for text in (
        "Airlines achieved a 99.97% safe departure rate across 9.8 million commercial flights.",
        "Sea surface temperatures were 1.5 to 2.0 degrees Celsius above the February average.",
        "The U.S. Department of Education reports the loan portfolio at $1.61 trillion.",
        "Local jurisdictions may impose additional protections.",
        "A 2023 meta-analysis of 29 studies (1.5 million participants) confirmed 25% lower "
        "cardiovascular mortality.",
        "Effect sizes for CBT (Cohen's d = 0.82) were robust (I-squared = 18%).",
        "CRISPR-Cas9 works in three steps: (1) guide RNA is designed to match target DNA, (2) "
        "Cas9 cuts both strands, (3) the cell repairs the cut.",
        "~90% accuracy at targeted sites, though off-target edits remain a concern.",
    ):
        assert sentences_of(text) == [text]
    # Still not prose: a cross-reference, an argument line, code with assignments, a row.
    for text in (
        "See Also qr, svd.",
        "PetrolPrice petrol price.",
        "Usage IQR(x, na.rm = FALSE, type = 7) Arguments x numeric.",
        "Q1 45.2 38.1 Q2 52.3 40.7 Q3 49.8 39.2.",
    ):
        assert sentences_of(text) == []


def test_sentences_cut_by_a_chunk_boundary_are_fragments() -> None:
    text = (
        "in Austria can be found at the URL of the mirror. The mirrors are listed on the "
        "CRAN page. Each mirror holds a full copy of"
    )
    found = kinds(text, cut_start=True, cut_end=True)
    assert found[0] == ("fragment", "in Austria can be found at the URL of the mirror.")
    assert found[-1] == ("fragment", "Each mirror holds a full copy of")
    assert sentences_of(text, cut_start=True, cut_end=True) == [
        "The mirrors are listed on the CRAN page."
    ]
    # the same text at a document's start and end: only what is not prose is left out
    assert kinds(text)[0][0] == "debris"


def test_segments_point_back_into_the_text() -> None:
    text = "Packages are downloaded from CRAN.  5.2 How can add-on packages be installed?"
    for s in segment(text):
        assert " ".join(text[s.start : s.end].split()) == s.text


# --- composition on real PDF text ---------------------------------------------------------------

# Filler long enough that the chunker (200 words, 40 overlap) cuts the FAQ answer mid-way.
LONG_SENTENCE = (
    "Memory use also depends on the platform, because a 64-bit build of R stores every "
    "pointer in eight bytes instead of four, so the same numeric vectors, lists and "
    "environments need noticeably more memory there than on a 32-bit build, which is why "
    "the memory limits that the administrator sets on a shared server should always be "
    "planned for the 64-bit build that the users actually run on that machine."
)
FAQ_PAGES = [
    "REVISION HISTORY\nNUMBER DATE DESCRIPTION NAME\n"
    "2.8.0 2023-01-25 Current release of the R memory notes.\n"
    "2.6.0 2011-01-14 First release of the R memory notes for users.\n\n"
    "Contents\n"
    "1 Memory . . . . . . . . . . . . . . . . . . . . . . . . . . . 2\n"
    "1.1 How much memory does R use? . . . . . . . . . . . . . . . . 2\n"
    "1.2 Reporting bugs . . . . . . . . . . . . . . . . . . . . . . 3\n",
    "1 Memory\n"
    "1.1 How much memory does R use?\n"
    "R keeps every object of a session in memory, so the memory R uses grows with the data "
    "that is loaded. " + LONG_SENTENCE + " The memory R uses can be limited with the "
    "--max-vsize option when R is started. It is reported by the function gc(), which also "
    "frees memory that is no longer in use. Large data sets can be kept in a database instead "
    "and read into memory in pieces when they are needed for an analysis. Objects that are "
    "no longer needed should be removed with rm() so that their memory can be reclaimed by "
    "the garbage collector. A session that runs out of memory stops with an error message "
    "that names the size of the allocation that failed.\n"
    "1.2 Reporting bugs\n"
    "Use the bug tracker to report a problem with R itself, after checking the NEWS file. "
    "Reports should include a small example that shows the problem.",
]


def evidence_from_pdf(pages: list[str], keep: list[int] | None = None) -> list[Evidence]:
    """The PDF through the real parser and chunker, as evidence (chunk ids carry the index)."""
    parsed = parse_bytes(make_pdf(pages), "memory-notes.pdf")
    chunks = chunk_pages(parsed.pages)
    chosen = [c for c in chunks if keep is None or c.index in keep]
    return [
        Evidence(
            chunk_id=f"ws/doc1/{c.index:06d}",
            doc_id="doc1",
            filename="memory-notes.pdf",
            page_start=c.page_start,
            page_end=c.page_end,
            text=c.text,
            score=0.5,
            source="kb",
        )
        for c in chosen
    ]


def straddled(evidence: list[Evidence]) -> int:
    """The chunk where LONG_SENTENCE starts but does not end: the chunker cut it there."""
    start, end = LONG_SENTENCE[:40], LONG_SENTENCE[-40:]
    cut = [n for n, ev in enumerate(evidence) if start in ev["text"] and end not in ev["text"]]
    assert cut, "the long sentence must straddle a chunk boundary for this test"
    assert end in evidence[cut[0] + 1]["text"]
    return cut[0]


def note(doc: str, text: str, score: float = 0.5) -> Evidence:
    """A one-chunk text note as the researcher's evidence."""
    return Evidence(
        chunk_id=f"ws/{doc}/000000",
        doc_id=doc,
        filename=f"{doc}.txt",
        page_start=1,
        page_end=1,
        text=text,
        score=score,
        source="kb",
    )


def answer_text(parts: list[dict]) -> str:
    return " ".join(p["text"] for p in parts)


def lead_of(parts: list[dict]) -> list[dict]:
    return [p for p in parts if p["passage"] == 0]


def flat(evidence: list[Evidence]) -> str:
    """The evidence's words as one text, each chunk's 40-word overlap counted once."""
    return " ".join(" ".join(passages(evidence)[0].words).split())


def test_the_composed_answer_quotes_prose_only_and_leads_with_the_best_passage() -> None:
    evidence = evidence_from_pdf(FAQ_PAGES)
    assert len(evidence) >= 2  # the chunker really cut the text
    parts = compose("How much memory does R use?", evidence)
    text = answer_text(parts)
    # the lead is one contiguous passage of the document, in its own order and words
    lead = lead_of(parts)
    assert 1 <= len(lead) <= 4
    assert lead[0]["text"].startswith("R keeps every object of a session in memory")
    assert answer_text(lead) in flat(evidence)
    # no heading, table of contents or revision table, even where it holds the question
    for debris in (
        "1.1 How much",
        "How much memory does R use?",
        ". . .",
        "REVISION",
        "2023-01-25",
        "1.2 Reporting bugs",
        "Contents",
    ):
        assert debris not in text
    # the bug-report sentence shares "use" with the question and still stays out
    assert "bug tracker" not in text
    # every part is a whole sentence of the document, cited
    for p in parts:
        assert p["text"][0].isupper() and p["text"].endswith(".")
        assert p["citations"] and all(1 <= m <= len(evidence) for m in p["citations"])


def test_a_sentence_cut_by_a_chunk_boundary_is_read_whole_from_its_neighbour() -> None:
    evidence = evidence_from_pdf(FAQ_PAGES)
    n = straddled(evidence)
    joined = passages(evidence[n : n + 2])
    assert len(joined) == 1  # neighbours are one passage, the 40-word overlap counted once
    words = " ".join(joined[0].words)
    assert LONG_SENTENCE in words and words.count(LONG_SENTENCE) == 1
    parts = compose("Why does memory use depend on a 64-bit build of R?", evidence[n : n + 2])
    whole = [p for p in parts if p["text"] == LONG_SENTENCE]
    assert whole and whole[0]["citations"] == [1, 2]  # read across both chunks, cites both


def test_a_cut_sentence_without_its_neighbour_is_dropped_not_quoted_in_part() -> None:
    evidence = evidence_from_pdf(FAQ_PAGES)
    n = straddled(evidence)
    head, tail = evidence[n], evidence[n + 1]
    assert not head["text"].endswith(".")  # a hard cut inside the sentence
    question = "Why does memory use depend on a 64-bit build of R?"
    for alone in ([head], [tail]):
        texts = [p["text"] for p in compose(question, alone)]
        assert texts, "the rest of the chunk still answers"
        for text in texts:
            assert text == LONG_SENTENCE or text not in LONG_SENTENCE  # never a piece of it
            assert "64-bit" not in text or text == LONG_SENTENCE
            assert text[0].isupper() and text.endswith(".")
    # the two chunks in either evidence order are still one passage
    assert LONG_SENTENCE in [p["text"] for p in compose(question, [tail, head])]


def test_off_topic_passages_stay_out_even_when_they_share_a_word() -> None:
    evidence = [
        note("a", "The memory R uses grows with the objects of the session.", 0.6),
        note("c", "Use the bug tracker to report problems with the R interpreter.", 0.55),
        note(
            "b",
            (
                "Packages use the CRAN mirrors for downloads. Memory that R uses can be "
                "limited with the --max-vsize option."
            ),
            0.5,
        ),
    ]
    parts = compose("How much memory does R use?", evidence)
    text = answer_text(parts)
    assert "bug tracker" not in text and "CRAN mirrors" not in text
    assert parts[0] == {
        "text": "The memory R uses grows with the objects of the session.",
        "citations": [1],
        "passage": 0,
    }
    assert {
        "text": "Memory that R uses can be limited with the --max-vsize option.",
        "citations": [3],
        "passage": 1,
    } in parts


def test_the_lead_answers_and_another_source_follows_in_its_own_paragraph() -> None:
    evidence = [
        note(
            "a",
            (
                "Boilers are serviced in spring. The hydraulic pump must be inspected every 500 "
                "operating hours. This inspection covers the seals and the relief valve. Lunch is "
                "served at noon."
            ),
            0.6,
        ),
        note(
            "b", "Vendor guidance says the hydraulic pump is inspected at every service visit.", 0.5
        ),
    ]
    parts = compose("How often must the hydraulic pump be inspected?", evidence)
    assert [p["text"] for p in parts] == [
        "The hydraulic pump must be inspected every 500 operating hours.",
        "Vendor guidance says the hydraulic pump is inspected at every service visit.",
    ]
    assert [p["citations"] for p in parts] == [[1], [2]]
    assert [p["passage"] for p in parts] == [0, 1]
    # a lead never opens on a sentence that refers back to one it leaves out
    lead = compose("What does the inspection cover?", evidence)[0]["text"]
    assert lead.startswith("The hydraulic pump must be inspected")
    rendered = render_answer(parts)
    assert rendered.count("\n\n") == 1 and rendered.endswith("visit. [2]")


def test_an_enumeration_is_quoted_with_its_items() -> None:
    # A method in three numbered steps: the step that shares most words with the question
    # (the third) had been quoted alone.
    steps = note(
        "a",
        "(1) Analyze 3-5 years of tax returns vs bank deposits. (2) Lifestyle analysis: compare"
        " income to spending via credit cards and loan applications. (3) Trace transfers, cash"
        " withdrawals over $5K, payments to unknowns.",
    )
    parts = compose("How does a forensic accountant trace hidden assets?", [steps])
    assert [p["text"][:12] for p in parts] == ["Analyze 3-5 ", "Lifestyle an", "Trace transf"]
    # Factors counted off with ordinals follow the sentence that announces them.
    factors = note(
        "b",
        "Historians name three causes of the decline: First, the tax base shrank as provinces"
        " were lost. Second, military spending consumed most of the revenue. Third, plague"
        " reduced the population. Trade in the east went on.",
    )
    parts = compose("What caused the decline of the empire?", [factors])
    assert [p["text"].split(",")[0] for p in parts] == [
        "Historians name three causes of the decline: First",
        "Second",
        "Third",
    ]
    # NUT's developer guide (page 15): a long path, whose fifth step answers. It leads, with
    # the steps after it, not the four before.
    nut = note(
        "c",
        "2.5 Example data path Here's the path a piece of data might take through this"
        " architecture. 1. EQUIPMENT reports on battery by setting flag in status register 2."
        " DRIVER notices this flag and stores it in the ups.status variable as OB. This update"
        " gets pushed out to any listeners via the sockets. 3. SERVER upsd sees activity on the"
        " socket, reads it, parses it, and commits the new data to its local version of the"
        " status variable. 4. CLIENT upsmon does a routine poll of SERVER for ups.status and"
        " gets OB. 5. CLIENT upsmon then invokes its NOTIFYCMD which is upssched. 6. upssched"
        " starts up a daemon to handle a timer which will expire about 30 seconds into the"
        " future. 7. 30 seconds later, the timer expires since the UPS is still on battery, and"
        " so upssched calls the CMDSCRIPT which is upssched-cmd.",
    )
    parts = compose("Which program does upsmon invoke as its NOTIFYCMD?", [nut])
    assert parts[0]["text"] == "CLIENT upsmon then invokes its NOTIFYCMD which is upssched."
    assert not any(p["text"].startswith(("SERVER", "CLIENT upsmon does")) for p in parts)


def test_nothing_relevant_gives_the_closest_sentence_or_nothing() -> None:
    evidence = [note("a", "Lunch is served at noon in the canteen.", 0.3)]
    assert compose("How often must the hydraulic pump be inspected?", evidence) == []
    assert extract_answer("How often must the hydraulic pump be inspected?", []) == []


def test_markers_inside_evidence_stay_defanged_and_web_evidence_stands_alone() -> None:
    evidence = [
        Evidence(
            chunk_id="web:1",
            url="https://example.org/pump",
            text=("The hydraulic pump is inspected under clause [2] of the plant rules."),
            score=0.4,
            source="web",
        ),
    ]
    parts = compose("How is the hydraulic pump inspected?", evidence)
    assert parts == [
        {
            "text": "The hydraulic pump is inspected under clause ［2］ of the plant rules.",
            "citations": [1],
            "passage": 0,
        }
    ]
    assert render_answer(parts).endswith("rules. [1]")


def test_page_text_with_line_breaks_keeps_its_headings_apart() -> None:
    # Text notes (.txt/.md) are chunked the same way: words joined by spaces.
    pages = [Page(1, "2.5 Uninstallation\nYou can uninstall R by make uninstall.\n")]
    (chunk,) = chunk_pages(pages)
    assert sentences_of(chunk.text) == ["You can uninstall R by make uninstall."]


# --- the passage contract: one lead passage, at most two more from other places ----------------

PUMP = "How often must the hydraulic pump be inspected?"


def test_the_lead_is_one_contiguous_passage_of_one_document_of_at_most_four_sentences() -> None:
    manual = note(
        "manual",
        "Boilers are serviced in spring. "
        + " ".join(
            f"The hydraulic pump of line {k} must be inspected every {k}00 operating hours."
            for k in range(1, 8)
        )
        + " Lunch is served at noon.",
        0.6,
    )
    others = [
        note("vendor", "Vendor guidance says the hydraulic pump is inspected at every visit.", 0.5),
        note("audit", "The audit found the hydraulic pump inspected twice a year.", 0.5),
        note("memo", "A memo asks that the hydraulic pump be inspected monthly.", 0.5),
    ]
    evidence = [manual, *others]
    parts = compose(PUMP, evidence)
    lead = lead_of(parts)
    assert 1 <= len(lead) <= 4
    assert {m for p in lead for m in p["citations"]} == {1}  # one document
    assert answer_text(lead) in manual["text"]  # contiguous, in its order and words
    also = {p["passage"] for p in parts} - {0}
    assert 1 <= len(also) <= 2
    places = [{m for p in parts if p["passage"] == n for m in p["citations"]} for n in also]
    assert all(len(place) == 1 for place in places)  # each passage is from one place
    assert len({min(place) for place in places} | {1}) == len(also) + 1  # all different
    # one paragraph per passage: no paragraph joins sentences from different places
    paragraphs = render_answer(parts).split("\n\n")
    assert len(paragraphs) == len(also) + 1
    assert {int(m) for m in re.findall(r"\[(\d+)\]", paragraphs[0])} == {1}


def test_a_web_result_that_answers_leads_and_is_cited() -> None:
    from masis_core.graph.nodes.evaluator import check

    question = "How does the Debian project plan its stable release cycle?"
    # The documents, ranked first, share most of the question's words and say nothing of it.
    evidence = [
        note(doc, text, 0.7 - k / 20)
        for k, (doc, text) in enumerate(
            [
                ("announce", "The Debian project announces each stable release by e-mail."),
                ("names", "Each stable release of the Debian project gets a code name."),
                ("upgrade", "A stable release of the Debian project is upgraded with apt."),
                ("freeze", "The Debian project keeps a stable release for servers."),
            ]
        )
    ]
    evidence.append(
        Evidence(
            chunk_id="web:1",
            url="https://example.org/debian-releases",
            title="Debian release cadence",
            text="The Debian project plans a stable release cycle of about two years, with a "
            "freeze of the testing suite first.",
            score=0.4,
            source="web",
        )
    )
    parts = compose(question, evidence)
    assert parts[0]["citations"] == [5] and parts[0]["text"].startswith("The Debian project plans")
    result = check(render_answer(parts), evidence)
    assert result["citations"][0]["url"] == "https://example.org/debian-releases"
    assert result["answer"].startswith("The Debian project plans a stable release cycle")


def test_a_sentence_ending_on_its_own_figure_is_quoted() -> None:
    # A service log's record ends on a figure, not on a list's next item number: it is the
    # answer (a thousand such records in tests/test_limits.py).
    evidence = [
        note("r815", "Record 815: unit U0815 was serviced in week 35 by team 3.", 0.6),
        note("r816", "Record 816: unit U0816 was serviced in week 36 by team 4.", 0.5),
    ]
    parts = compose("When was unit U0815 serviced?", evidence)
    assert parts and parts[0]["text"] == "Record 815: unit U0815 was serviced in week 35 by team 3."


@pytest.mark.parametrize(
    ("text", "quotable"),
    [
        ("-Cf makes the scanner about twice as fast, and -Cfe buys you nearly as much.", True),
        ("} the opening brace of an action must begin on the same line as the rule.", True),
        ("solutions: prints the corrected copy of each sheet, not the blank one.", True),
        ("Mark To raise the limit, you enlarge the constants in the header:", True),
        ("m <- match.call(expand.dots = FALSE) if (is.null(m$x)) stop()", False),
        ("#define MAX_SHORT 32700 #define JAMSTATE -32766", False),
        ("x <- y <- { a } is not how it is done.", False),
        ("Rank 1 USA 46 37 38 121.", False),
        ("by default, the pages install under the prefix and are not found.", False),
    ],
)
def test_prose_around_code_is_told_from_code(text: str, quotable: bool) -> None:
    assert prose_with_code(text) is quotable


def test_a_sentence_that_opens_with_an_option_can_lead() -> None:
    """The answer in a manual's sentence that opens with an option ("-f makes ...") had been
    debris to the segmenter: in the evidence, in no window (issue 51)."""
    evidence = [
        note(
            "a",
            (
                "Scanner speed depends on how its tables are compressed. "
                "-Cf makes the scanner about twice as fast, and -Cfe buys you nearly as much "
                "speed with tables a fraction of the size. Building larger tables takes longer."
            ),
            0.6,
        ),
        note("b", "The scanner reads its input one buffer at a time.", 0.5),
    ]
    parts = compose("Which option gives nearly the speed of -Cf with smaller tables?", evidence)
    assert "-Cfe buys you nearly as much speed" in answer_text(lead_of(parts))
