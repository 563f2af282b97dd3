"""The words of a question that no document of the workspace uses, and whether the question
looks written in another language than the documents' English.

Retrieval matches words (BM25) and English word vectors (WordLlama); neither translates. A
question asked in French of English manuals found little and paused with a list of the
question's "missing" words ("fonction", "fichier", "lit") that read as a fault of the
documents. The run now records why, and the review and the answer say it.

Three conditions, each of which alone misfires. py3langid (langid.py's model, bundled in its
wheel) names a language other than English for 26 of the 3,160 English questions of three
words or more in ``../shared/eval`` and ``bench/data`` ("Why do humans dream?": Nigerian
Pidgin). Each of those holds two or more English function or question words (``STOP_WORDS``,
``QUESTION_WORDS``); each of 24 questions in French, German, Spanish, Italian, Portuguese,
Dutch, Polish, Russian and Japanese holds at most one ("a", "was", "is" in "Qui a fondé …",
"Was ist …", "Wat is …"). And half the question's words or more must occur in no document of
the workspace: documents in the question's language answer it as they would in English. Not
"most": the subject is a name the documents use ("Debian"), and a foreign word can be one too
("stata" in the R FAQ). Measured against the unseen FAQs' workspace (``bench/data``): no
English question taken for another language, 23 of the 24 others found ("Comment installer un
paquet R depuis CRAN ?" is not: "comment", "installer" and "cran" are the FAQs' words too).
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


def other_language(question: str, unknown: list[str]) -> bool:
    """Not English by py3langid, one English function word at most, a sentence's length, and
    half its words or more unknown to the workspace (the module docstring has the
    measurement)."""
    said = words(question)
    if len(said) < SENTENCE_WORDS and question.isascii():
        return False
    if sum(w in FUNCTION_WORDS for w in said) > FEW_FUNCTION_WORDS:
        return False
    if 2 * len(unknown) < len(_looked_up(question)):
        return False
    import py3langid  # its model loads on first use (0.8 s here): only past the checks above

    return bool(py3langid.classify(question)[0] != "en")


def vocabulary_check(index: KeywordIndex | None, question: str) -> dict[str, object]:
    """What the researcher records in its trace entry: the unknown words (a few) and whether
    the question looks written in another language; empty when every word is known."""
    unknown = unknown_words(index, question)
    if not unknown:
        return {}
    return {"unknown_words": unknown[:SHOWN], "other_language": other_language(question, unknown)}


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
    return (
        "Your question does not look written in English, and many of its words ("
        + ", ".join(last.get("unknown_words", [])[:5])
        + ") occur in no document of this workspace. The search matches words and does not "
        "translate: ask in the language of your documents."
    )
