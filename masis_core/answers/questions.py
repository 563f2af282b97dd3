"""What counts as a question, in one place: the first ask and every rephrase obey it."""

from __future__ import annotations

from masis_core.errors import InputError

# A question is a question: longer text belongs in a document. (Search uses the first 500
# characters anyway; this bounds what is stored, traced and shown.)
MAX_QUESTION_CHARS = 20_000
# What one search query may be: retrieval and the web search the first 500 characters of the
# question, an alternative phrasing is kept to 300, a web query to 400 (Tavily's own limit).
MAX_QUERY_CHARS = 500
MAX_ALTERNATIVE_CHARS = 300
MAX_WEB_QUERY_CHARS = 400
MAX_ALTERNATIVES = 2


def check_question(question: str) -> str:
    """The question stripped, or a ``InputError`` that says what is wrong with it."""
    question = question.strip()
    if not question:
        raise InputError("The question is empty.")
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError(
            f"The question is {len(question):,} characters long; the limit is "
            f"{MAX_QUESTION_CHARS:,}. Put long material into a document and ask about it."
        )
    return question
