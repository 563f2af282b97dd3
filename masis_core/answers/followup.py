"""Follow-up questions: a short question asked under an answer, made standalone.

Retrieval sees one question at a time, so "How often is it inspected?" under an answer about
the hydraulic pump must become "How often is hydraulic pump inspected?" before it runs. The
offline rewrite carries the previous question's key terms into a follow-up that has a pronoun
or no topic of its own; the Ollama engine asks the chat model to condense the thread and falls
back to the offline rewrite when the model fails or returns something that is not a question
about the thread. The analyst sees the rewrite and may edit it before it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from masis_core.answers.questions import MAX_QUERY_CHARS
from masis_core.text.sentences import content_stems
from masis_core.text.words import QUESTION_WORDS, STOP_WORDS, stem

# Pronouns that stand for the previous topic and can be replaced by it word for word.
PRONOUNS = frozenset({"it", "they", "them"})
POSSESSIVES = frozenset({"its", "their"})
# Words that point back without naming anything ("this valve", "that", "those"): the topic is
# added after the question instead of replacing a word.
POINTERS = frozenset({"this", "that", "these", "those", "such", "same", "there", "one", "ones"})
# Words that are content to a search but never a topic to carry over: modals, frequency.
NOT_TOPIC = frozenset(
    {"must", "might", "shall", "need", "needs", "often", "usually", "always", "never", "also",
     "still", "ever", "else", "more", "most", "less", "again", "about", "exactly", "really"}
)  # fmt: skip
# Turns of the thread the model sees, and how much of each answer: enough to resolve a
# reference, little enough to keep the condensing call short.
HISTORY_TURNS = 3
ANSWER_CHARS = 600
_TOKEN = re.compile(r"[^\W_][\w'.-]*[^\W_]|[^\W_]")


@dataclass(frozen=True)
class Turn:
    """One earlier turn of a thread: the standalone question it ran and its answer."""

    question: str
    answer: str = ""


@dataclass(frozen=True)
class Rewrite:
    """The standalone question, how it was made (offline | model | unchanged), and why the
    model's rewrite was not used when it was not."""

    question: str
    method: str
    error: str | None = None

    def note(self) -> str:
        """One line for the analyst under the editable question."""
        text = {
            "unchanged": "The follow-up already stands alone; it runs as typed.",
            "offline": "Rewritten with the previous question's key terms.",
            "model": "Condensed from the thread by the chat model.",
        }.get(self.method, self.method)
        return f"{text} (The model's rewrite was not usable: {self.error})" if self.error else text


def _is_content(word: str) -> bool:
    low = word.lower()
    return (
        low not in STOP_WORDS
        and low not in QUESTION_WORDS
        and low not in POINTERS
        and low not in NOT_TOPIC
        and len(low) > 2
        and not low[0].isdigit()
    )


def key_terms(question: str) -> str:
    """The previous question's topic: its longest run of consecutive content words (the first
    of equal runs), as written — "the hydraulic pump" gives "hydraulic pump"."""
    runs: list[list[str]] = [[]]
    for token in _TOKEN.findall(question):
        if _is_content(token):
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    best = max(runs, key=len)
    return " ".join(best)


def needs_context(follow_up: str) -> bool:
    """A pronoun or pointer word, or no content word at all ("Why?", "And how often?")."""
    tokens = [t.lower() for t in _TOKEN.findall(follow_up)]
    if any(t in PRONOUNS or t in POSSESSIVES or t in POINTERS for t in tokens):
        return True
    return not any(_is_content(t) for t in tokens)


def offline_rewrite(follow_up: str, history: list[Turn]) -> Rewrite:
    """Replace the first pronoun with the previous question's key terms, or add them after a
    follow-up that points back without naming its topic. Terms the follow-up already has are
    not repeated."""
    follow_up = " ".join(follow_up.split())
    if not history or not needs_context(follow_up):
        return Rewrite(follow_up, "unchanged")
    have = content_stems(follow_up)
    previous = history[-1].question
    if any(_is_content(t) for t in _TOKEN.findall(follow_up)):
        carried = key_terms(previous).split()  # it / this: the topic phrase
    else:  # "Why?", "How often?": everything the previous question was about
        carried = [t for t in _TOKEN.findall(previous) if _is_content(t)]
    topic_words = list(dict.fromkeys(w for w in carried if stem(w.lower()) not in have))
    if not topic_words:
        return Rewrite(follow_up, "unchanged")
    topic = " ".join(topic_words)

    def replace(match: re.Match[str]) -> str:
        word = match.group(0).lower()
        return f"{topic}'s" if word in POSSESSIVES else topic

    pattern = r"\b(" + "|".join(sorted(PRONOUNS | POSSESSIVES)) + r")\b"
    rewritten, n = re.subn(pattern, replace, follow_up, count=1, flags=re.IGNORECASE)
    if not n:
        body = follow_up.rstrip(" ?.!")
        mark = follow_up[len(body) :].strip() or "?"
        rewritten = f"{body} ({topic}){mark}" if body else f"{topic}?"
    return Rewrite(rewritten[:MAX_QUERY_CHARS], "offline")


def usable_rewrite(candidate: str, follow_up: str, history: list[Turn]) -> str | None:
    """Why a model's rewrite is junk, or None when it is usable: it must be one short line
    with a topic shared with the follow-up or the thread, and not JSON or a refusal."""
    text = " ".join(candidate.split())
    if not text:
        return "empty"
    if len(text) > MAX_QUERY_CHARS:
        return f"{len(text)} characters long"
    if text[0] in "{[<" or "```" in text:
        return "not a question but markup"
    stems = content_stems(text)
    context = content_stems(follow_up)
    for turn in history[-HISTORY_TURNS:]:
        context |= content_stems(turn.question)
    if not stems & context:
        return "it shares no term with the follow-up or the thread"
    return None


def history_text(history: list[Turn]) -> str:
    """The last turns as the model sees them (answers cut short)."""
    lines = []
    for n, turn in enumerate(history[-HISTORY_TURNS:], start=1):
        lines.append(f"Q{n}: {turn.question}")
        if turn.answer:
            lines.append(f"A{n}: {turn.answer[:ANSWER_CHARS]}")
    return "\n".join(lines)
