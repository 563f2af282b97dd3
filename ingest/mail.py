"""E-mail messages (.eml) with the standard library's email package (the modern policy, which
decodes headers and bodies): the plain-text body, or the HTML one read as a web page, cited
by sender, date and subject. An attachment of a kind the Library reads is handed back to be
ingested as a document of its own (``ParsedDocument.attachments``)."""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from ingest.document import ParsedDocument
from ingest.kinds import SUFFIXES, Blocks
from ingest.parsing import SUPPORTED_SUFFIXES
from ingest.webpage import add_page
from masis_core.errors import DocumentError


def header(message: EmailMessage, name: str) -> str:
    try:
        return " ".join(str(message.get(name, "") or "").split())
    except (ValueError, TypeError, IndexError):  # a malformed header the policy cannot parse
        return ""


def place_of(message: EmailMessage) -> str:
    """'e-mail from Ann <ann@example.org>, Tue, 3 Mar 2020 10:00:00 +0000, “Q3 figures”'."""
    sender = header(message, "From") or "an unknown sender"
    date = header(message, "Date") or "no date"
    subject = header(message, "Subject") or "no subject"
    return f"e-mail from {sender}, {date}, “{subject}”"


def body_of(message: EmailMessage) -> tuple[str, str]:
    """The body's content and its subtype ('plain' or 'html'); empty when there is none."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return "", "plain"
    try:
        content = part.get_content()
    except (LookupError, ValueError, AssertionError):  # an unknown charset, a broken encoding
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else ""
    return str(content), part.get_content_subtype()


# More than this many attachments in one message is a mass mailing, not a source.
MAX_ATTACHMENTS = 20


def attachments_of(message: EmailMessage) -> list[tuple[str, bytes]]:
    """The attached files the Library reads (by their names' suffixes), decoded."""
    found = []
    for part in message.iter_attachments():
        name = part.get_filename() or ""
        if not name.lower().endswith(SUPPORTED_SUFFIXES + SUFFIXES):
            continue
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes) and payload:
            found.append((name, payload))
    return found[:MAX_ATTACHMENTS]


def parse(data: bytes) -> ParsedDocument:
    if b"\x00" in data[:8192]:
        raise DocumentError("unreadable: binary content in an e-mail file")
    message = BytesParser(policy=policy.default).parsebytes(data)
    if not isinstance(message, EmailMessage) or not message.keys():
        raise DocumentError("corrupt: the file has no e-mail headers")
    place = place_of(message)
    content, subtype = body_of(message)
    blocks = Blocks()
    if subtype == "html":
        add_page(blocks, content, place)
    else:
        paragraphs = [p for p in content.replace("\r\n", "\n").split("\n\n") if p.strip()]
        blocks.paragraphs(place, list(enumerate(paragraphs, start=1)))
    parsed = blocks.document()
    parsed.attachments = attachments_of(message)
    return parsed
