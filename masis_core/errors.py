"""The workbench's exception tree: callers catch ``MasisError`` and show ``str(exc)`` as is.

MasisError
├── ConfigError            a setting or combination of settings cannot work
├── ProviderError          the embedding/chat backend failed
│   ├── ProviderUnavailable    Ollama is down, slow or unreachable
│   ├── ModelMissing           Ollama answers but lacks the model (``ollama pull`` fixes it)
│   └── MalformedOutput        the model answered something we cannot parse
├── StoreError             the vector store or registry refused an operation
│   ├── EmbedderMismatch       a workspace queried or written with a different embedding model
│   └── DuplicateRow           a row with that key is already stored (either database)
├── WorkspaceError         unknown / duplicate workspace, bad workspace name (a workspace
│                          the account may not see is "unknown" too: no existence oracle)
├── AccessError            an account, a password, a role or a token does not allow it
│   ├── SignInRefused          wrong name or password, an expired session, a bad token
│   └── Throttled              too many failed sign-ins: the message says when to retry
├── DocumentError          one input file cannot be ingested (message says why)
└── InputError             a request the workbench cannot act on: an empty or too-long
    │                      question, an unknown run, a run that cannot resume, a bad
    │                      command-line value or question file
    ├── ReviewError            a review response that does not fit the paused run's review
    └── RunBusy                another tab or process is driving that run right now
"""

from __future__ import annotations


class MasisError(Exception):
    """Base class; the message is written for the analyst."""


class ConfigError(MasisError):
    pass


class ProviderError(MasisError):
    pass


class ProviderUnavailable(ProviderError):
    pass


class ModelMissing(ProviderError):
    pass


class MalformedOutput(ProviderError):
    pass


class StoreError(MasisError):
    pass


class EmbedderMismatch(StoreError):
    pass


class WorkspaceError(MasisError):
    pass


class AccessError(MasisError):
    """The account may see the workspace but its role does not allow the action, or an
    account operation is refused (the last admin, a bad account name)."""


class SignInRefused(AccessError):
    pass


class Throttled(SignInRefused):
    pass


class DocumentError(MasisError):
    pass


class InputError(MasisError):
    pass


class ReviewError(InputError):
    pass


class RunBusy(InputError):
    pass


class DuplicateRow(StoreError):
    """A row with that key is already stored (SQLite's and PostgreSQL's integrity errors)."""
