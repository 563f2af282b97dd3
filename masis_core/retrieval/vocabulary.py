"""The words of a question that no document of the workspace uses, and whether the question
looks written in another language than the documents' English.

Retrieval matches words (BM25) and English word vectors (WordLlama); neither translates. A
question asked in French of English manuals found little and paused with a list of the
question's "missing" words ("fonction", "fichier", "lit") that read as a fault of the
documents. The run now records why, and the review and the answer say it.

Guards first, then two language guesses. py3langid (langid.py's model, bundled in its wheel)
names a language other than English for some English questions ("Why do humans dream?":
Nigerian Pidgin; docs/measurements/retrieval.md). Each of those holds two or more English
function or question words (``STOP_WORDS``, ``QUESTION_WORDS``), while questions in French,
German, Spanish, Italian, Portuguese, Dutch, Polish, Russian, Japanese, Chinese and Greek
hold at most one ("a", "was", "is", "in" in "Qui a fondé …", "Was ist …", "Wat is …", "…
pacchetto in R?"); so a question with two or more, or of
fewer than three ASCII words, is English. Past those guards the question's language is
compared with that of the passages its search ranked first: documents in the question's
language answer it as they would in English. (A first version asked instead that half the
question's words occur in no document: on the 15 manuals, whose words include "un", "en", "de",
"la" and "tracer", it missed foreign questions written after it was tuned.) Measured in
docs/measurements/retrieval.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from masis_core.retrieval.bm25 import KeywordIndex, content_words
from masis_core.text.words import QUESTION_WORDS, SNOWBALL, STOP_WORDS, words

FUNCTION_WORDS = STOP_WORDS | QUESTION_WORDS
# More English function words than this: English, whatever the language model says.
FEW_FUNCTION_WORDS = 1
# Fewer words than this, all ASCII: a keyword query or a fragment ("Cause?"), not a sentence.
SENTENCE_WORDS = 3
# At most this many unknown words are recorded with the run.
SHOWN = 8
# How much of the first passages' text tells their language.
PASSAGE_CHARS = 2000


def _looked_up(question: str) -> list[str]:
    """The question's words that retrieval looks up: no stop, question or one-letter word."""
    return [w for w in content_words(question) if len(w) > 1 and w not in FUNCTION_WORDS]


def unknown_words(index: KeywordIndex | None, question: str) -> list[str]:
    """The question's content words (unstemmed, in order) whose stem no chunk of the
    workspace holds; none when the workspace has no keyword index yet."""
    if index is None:
        return []
    asked = _looked_up(question)
    return [w for w, s in zip(asked, SNOWBALL.stemWords(asked), strict=True) if s not in index.idf]


def other_language(question: str, passages: list[str]) -> bool:
    """A sentence-long question with one English function word at most, whose language
    (py3langid) is not English and not that of ``passages``, the texts its search ranked first
    (the module docstring has the measurement)."""
    said = words(question)
    if len(said) < SENTENCE_WORDS and question.isascii():
        return False
    if sum(w in FUNCTION_WORDS for w in said) > FEW_FUNCTION_WORDS:
        return False
    import py3langid  # its model loads on first use (0.8 s here): only past the checks above

    asked = py3langid.classify(question)[0]
    if asked == "en":
        return False
    found = py3langid.classify(" ".join(passages)[:PASSAGE_CHARS])[0] if passages else "en"
    return bool(asked != found)


def vocabulary_check(
    index: KeywordIndex | None, question: str, passages: list[str]
) -> dict[str, object]:
    """What the researcher records in its trace entry: the question's words no document uses
    (a few), and whether the question looks written in another language than ``passages``."""
    out: dict[str, object] = {}
    unknown = unknown_words(index, question)
    if unknown:
        out["unknown_words"] = unknown[:SHOWN]
    if other_language(question, passages):
        out["other_language"] = True
    return out


def _last_search(trace: Iterable[dict[str, Any]]) -> dict[str, Any]:
    entries = [e for e in trace if e.get("node") == "researcher"]
    return entries[-1] if entries else {}


def recorded_unknown(trace: Iterable[dict[str, Any]]) -> list[str]:
    """The unknown words a run's last search recorded (``vocabulary_check``)."""
    return list(_last_search(trace).get("unknown_words") or [])


def language_notice(trace: Iterable[dict[str, Any]]) -> str | None:
    """What the analyst reads, above the answer or the review, when the run's question looked
    written in another language than the documents."""
    last = _last_search(trace)
    if not last.get("other_language"):
        return None
    unknown = last.get("unknown_words") or []
    named = f" (no document here uses {', '.join(unknown[:5])})" if unknown else ""
    return (
        "Your question does not look written in English, nor in the language of the passages "
        f"its search found{named}. The search matches words and does not translate: ask in "
        "the language of your documents."
    )
