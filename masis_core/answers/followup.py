"""Follow-up questions: a short question asked under an answer, made standalone.

Retrieval sees one question at a time, so "How often is it inspected?" under a question about
the hydraulic pump must become "How often is the hydraulic pump inspected?" before it runs.
The offline rewrite replaces a pronoun only by a noun phrase of the previous question it can
be sure of; otherwise it keeps the follow-up as typed and adds the previous question, so the
search still has the topic and no ungrammatical question is made ("What does function
reads's header argument do?" was). The Ollama engine asks the chat model to condense the
thread and falls back to the offline rewrite when the model fails or returns something that
is not a question about the thread. The analyst sees the rewrite and may edit it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from masis_core.answers.questions import MAX_QUERY_CHARS
from masis_core.text.sentences import content_stems
from masis_core.text.words import QUESTION_WORDS, STOP_WORDS

# Pronouns that stand for the previous topic and can be replaced by it word for word.
PRONOUNS = frozenset({"it", "they", "them"})
POSSESSIVES = frozenset({"its", "their"})
# Words that point back without naming anything ("this valve", "that", "those"): the topic is
# added after the question instead of replacing a word.
POINTERS = frozenset({"this", "that", "these", "those", "such", "same", "there", "one", "ones"})
# Words that leave out what they are about ("What should I use instead?"): vague on their own.
ELLIPTICAL = frozenset({"instead", "otherwise"})
# Words of a follow-up that carry no subject of their own ("make it go away", "set that up"):
# the search pairs them with the thread's subject, never searches them alone.
VAGUE = frozenset(
    {"make", "makes", "made", "get", "gets", "got", "go", "goes", "away", "use", "set", "fix",
     "stop", "happen", "happens", "mean", "means", "work", "works", "thing", "things", "else"}
)  # fmt: skip
ARTICLES = frozenset({"the", "a", "an"})
WH_DETERMINERS = frozenset({"what", "which", "whose"})
DO_SUPPORT = frozenset(
    {
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "must",
        "may",
        "might",
        "shall",
    }
)
BE = frozenset({"is", "are", "was", "were"})
AUXILIARIES = DO_SUPPORT | BE | {"has", "have", "had"}
# After "must the pump …" only these keep the phrase whole ("… be inspected").
NON_FINITE = frozenset({"be", "have", "been", "get"})
# The context form: the follow-up as typed, then the question it follows up.
CONTEXT = " (Follow-up to: {})"
_CONTEXT = re.compile(r" \(Follow-up to: (.*)\)$")
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
    section: str = ""  # the place its answer's lead cited ("FAQ › Data stale", "page 7")


@dataclass(frozen=True)
class Rewrite:
    """The standalone question, how it was made (offline: a pronoun replaced | context: the
    previous question added | model | unchanged), and why the
    model's rewrite was not used when it was not."""

    question: str
    method: str
    error: str | None = None

    def note(self) -> str:
        """One line for the analyst under the editable question."""
        text = {
            "unchanged": "The follow-up already stands alone; it runs as typed.",
            "offline": "The pronoun is replaced by what the previous question was about.",
            "context": "Kept as typed, with the previous question added for the search.",
            "model": "Condensed from the thread by the chat model.",
        }.get(self.method, self.method)
        if self.method == "context" and (subject := subject_queries(self.question)):
            text += f" The search also carries its subject: “{subject[-1]}”."
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


def needs_context(follow_up: str) -> bool:
    """A pronoun or pointer word, or no content word at all ("Why?", "And how often?")."""
    tokens = [t.lower() for t in _TOKEN.findall(follow_up)]
    if any(t in PRONOUNS or t in POSSESSIVES or t in POINTERS or t in ELLIPTICAL for t in tokens):
        return True
    return not any(_is_content(t) for t in tokens)


def _np_word(word: str) -> bool:
    low = word.lower()
    return not (low in STOP_WORDS or low in QUESTION_WORDS or low in NOT_TOPIC or low in POINTERS)


def _phrases(tokens: list[str]) -> list[tuple[int, int]]:
    """(start, end) of each "the|a|an" + words run, "of" + another run joined to it: "the
    relief valve of the hydraulic pump" is one phrase."""
    low = [t.lower() for t in tokens]
    found: list[tuple[int, int]] = []
    i = 0
    while i < len(low):
        if low[i] not in ARTICLES:
            i += 1
            continue
        j = i + 1
        while j < len(low) and _np_word(low[j]):
            j += 1
        while j > i + 1 and j + 1 < len(low) and low[j] == "of":
            k = j + 2 if low[j + 1] in ARTICLES else j + 1
            end = k
            while end < len(low) and _np_word(low[end]):
                end += 1
            if end == k:
                break
            j = end
        if j > i + 1:
            found.append((i, j))
        i = max(j, i + 1)
    return found


def noun_phrase(question: str) -> str | None:
    """The one noun phrase of ``question`` a pronoun can stand for, with "the" ("How often
    must the hydraulic pump be inspected?" gives "the hydraulic pump"); None when it has
    none or several, or asks for a thing by its kind ("What function reads a data frame
    from a text file?": "its" is then the answer's function, and "function reads" made
    "What does function reads's header argument do?")."""
    tokens = _TOKEN.findall(question)
    low = [t.lower() for t in tokens]
    if len(low) > 1 and low[0] in WH_DETERMINERS and low[1] not in AUXILIARIES | ARTICLES:
        return None
    phrases = _phrases(tokens)
    if len(phrases) != 1:
        return None
    (i, j), after = phrases[0], low[phrases[0][1]] if phrases[0][1] < len(low) else ""
    if DO_SUPPORT & set(low[:i]) and after not in NON_FINITE:
        return None  # "does the pump work": the run ends in the verb
    if BE & set(low[:i]) and j - i > 2 and low[j - 1].endswith("ed"):
        j -= 1  # "is the pump inspected": the participle is not the thing
    return " ".join(["the", *tokens[i + 1 : j]])


def _plural(phrase: str) -> bool:
    head = phrase.split(" of ", 1)[0].rsplit(maxsplit=1)[-1].lower()
    return head.endswith("s") and not head.endswith(("ss", "us", "is"))


def _substitute(follow_up: str, phrase: str) -> str | None:
    """The follow-up's first pronoun replaced by ``phrase`` when they agree in number:
    "it" the thing, "its" the thing's, "they"/"them"/"their" for a plural phrase."""
    match = re.search(r"\b(it|its|they|them|their)\b", follow_up, re.IGNORECASE)
    if match is None or (match[1].lower() in {"it", "its"}) == _plural(phrase):
        return None
    word = match[1].lower()
    text = phrase if word in PRONOUNS else f"{phrase}'" if _plural(phrase) else f"{phrase}'s"
    if match.start() == 0 or follow_up[: match.start()].rstrip().endswith((".", "?", "!")):
        text = text[0].upper() + text[1:]
    return follow_up[: match.start()] + text + follow_up[match.end() :]


def standalone(question: str) -> str:
    """A question without the context a rewrite added to it (the one it follows up)."""
    return _CONTEXT.sub("", question)


def offline_rewrite(follow_up: str, history: list[Turn]) -> Rewrite:
    """The follow-up with its pronoun replaced by the previous question's noun phrase; or,
    when that phrase is not certain (none, several, a pointer word, "Why?"), the follow-up
    as typed with the previous question added, so the search has the thread's topic and
    nothing ungrammatical is made up."""
    follow_up = " ".join(follow_up.split())
    if not history or not needs_context(follow_up):
        return Rewrite(follow_up, "unchanged")
    previous = " ".join(history[-1].question.split())
    context = _CONTEXT.search(previous)
    if context and needs_context(standalone(previous)):
        previous = context[1]  # a follow-up of a follow-up: the question that stood alone
    previous = standalone(previous)
    phrase = noun_phrase(previous)
    rewritten = _substitute(follow_up, phrase) if phrase else None
    if rewritten and len(rewritten) <= MAX_QUERY_CHARS:
        return Rewrite(rewritten, "offline")
    room = MAX_QUERY_CHARS - len(follow_up) - len(CONTEXT.format(""))
    if room < len(previous):
        previous = previous[: max(0, room - 1)].rsplit(" ", 1)[0] + "…"
    return Rewrite(follow_up + CONTEXT.format(previous), "context")


def _content_words(text: str) -> list[str]:
    """The words of ``text`` that name something, in order, once each ("What's this about
    data stale?": "data", "stale")."""
    words = [re.sub(r"['’]s$", "", t) for t in _TOKEN.findall(text)]
    vague = VAGUE | ELLIPTICAL
    return list(dict.fromkeys(w for w in words if _is_content(w) and w.lower() not in vague))


def subject_queries(question: str) -> list[str]:
    """For a follow-up kept as typed with the question it follows (the context form), what
    the search adds so it finds the thread's subject: the follow-up's own content words with
    the previous question's, and the previous question's alone ("How do I make it go away?"
    after "What's this about data stale?": "data stale"). Its own vague words ("make it go
    away") had left the passage on stale data under the bar. None for any other question."""
    context = _CONTEXT.search(question)
    if context is None:
        return []
    subject = " ".join(_content_words(context[1]))
    own = " ".join(_content_words(standalone(question)))
    return [q for q in dict.fromkeys([f"{own} {subject}".strip(), subject]) if q]


def thread_subject(question: str, history: list[Turn]) -> list[str]:
    """What the search of a thread's run adds when the question it runs still leans on the
    thread (asked as typed, or its rewrite edited back: "How do I make it go away?"): the
    question's own content words with the previous standalone question's, and those alone;
    when that question names nothing either, the section its answer cited (``Turn.section``).
    None for a question that stands alone or one that already carries its context."""
    if not history or _CONTEXT.search(question) or not needs_context(question):
        return []
    previous = standalone(history[-1].question)
    subject = " ".join(_content_words(previous)) or " ".join(_content_words(history[-1].section))
    own = " ".join(_content_words(question))
    return [q for q in dict.fromkeys([f"{own} {subject}".strip(), subject]) if q]


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
