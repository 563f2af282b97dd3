"""Web search through Tavily: isolated queries, URL dedup, a cache in the database.

Only ever built with an API key: tavily-python has a key-less mode that would still call out,
and "no key" must mean "no web request" everywhere.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from masis_core.config import Settings
from masis_core.graph.context import WebSearch
from masis_core.state import Evidence
from masis_core.storage.db import Connection, open_database, upsert

log = logging.getLogger(__name__)

CACHE_COLUMNS = ("key", "query", "params", "results", "fetched_at")


def parse_domains(text: str) -> list[str]:
    """An analyst's "wikipedia.org, .gov" as a domain list."""
    return [d.strip().lower() for d in text.replace(";", ",").split(",") if d.strip()]


def normalise_url(url: str) -> str:
    """Case-insensitive, without fragment, default port or trailing slash: one page, one key."""
    parts = urlsplit(url.strip().lower())
    netloc = parts.netloc.removesuffix(":443").removesuffix(":80")
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme or "https", netloc, path, parts.query, ""))


def web_id(url: str) -> str:
    """A stable evidence id for a web page: the same URL gives the same id in every run."""
    return "web:" + hashlib.sha256(normalise_url(url).encode()).hexdigest()[:16]


def dedup(results: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Keep the first (highest-ranked) result per normalised URL; also the number dropped."""
    seen: set[str] = set()
    kept = []
    for r in results:
        key = normalise_url(str(r.get("url", "")))
        if key in seen:
            continue
        seen.add(key)
        kept.append(r)
    return kept, len(results) - len(kept)


def explain(exc: Exception, timeout_s: float) -> str:
    """One sentence per failure kind, for the trace and the UI."""
    from tavily import errors

    name = type(exc).__name__
    detail = str(exc).strip()
    if isinstance(exc, errors.InvalidAPIKeyError):
        return "Tavily rejected the API key (401): check TAVILY_API_KEY."
    if isinstance(exc, errors.UsageLimitExceededError):
        return "Tavily's usage limit is exceeded (429): wait, or raise the plan's quota."
    if isinstance(exc, errors.ForbiddenError):
        return f"Tavily refused access (403){': ' + detail if detail else ''}."
    if isinstance(exc, errors.BadRequestError):
        return f"Tavily rejected the request as invalid (400){': ' + detail if detail else ''}."
    if isinstance(exc, errors.TimeoutError | TimeoutError) or "Timeout" in name:
        return f"Tavily did not answer within {timeout_s:g} s."
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if status is not None and status >= 500:
        return f"Tavily had a server error ({status}); try again later."
    if "Connection" in name:
        return "Tavily could not be reached (connection failed)."
    return f"Tavily search failed: {name}: {detail}"[:300]


@dataclass
class WebOutcome:
    results: list[Evidence] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)  # {query, error}
    queries: list[str] = field(default_factory=list)
    received: int = 0
    duplicates_dropped: int = 0
    cache_hits: int = 0
    api_calls: int = 0
    domains: list[str] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "results": self.results,
            "errors": self.errors,
            "queries": self.queries,
            "received": self.received,
            "duplicates_dropped": self.duplicates_dropped,
            "cache_hits": self.cache_hits,
            "api_calls": self.api_calls,
            "domains": self.domains,
        }


class WebSearcher:
    """One per process; thread-safe (a database connection per call, one HTTP session)."""

    def __init__(self, settings: Settings, client: Any | None = None) -> None:
        if settings.tavily_api_key is None:
            raise ValueError("WebSearcher needs TAVILY_API_KEY; check Workbench.web_status() first")
        self.settings = settings
        if client is None:
            from tavily import TavilyClient

            client = TavilyClient(
                api_key=settings.tavily_api_key.get_secret_value(),
                api_base_url=settings.tavily_base_url,
            )
        self.client = client
        self.db = open_database(settings)

    def _conn(self) -> AbstractContextManager[Connection]:
        return self.db.connect()

    def params(self, trusted_only: bool, domains: Sequence[str] | None = None) -> dict[str, Any]:
        """What is sent besides the query; part of the cache key."""
        params: dict[str, Any] = {
            "max_results": self.settings.web_max_results,
            "search_depth": "basic",
        }
        if trusted_only:
            chosen = [d.strip() for d in (domains or self.settings.trusted_domains) if d.strip()]
            params["include_domains"] = chosen
        return params

    def _cached(self, key: str) -> list[dict[str, Any]] | None:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT results, fetched_at FROM web_cache WHERE key = ?", (key,)
            ).fetchone()
        if row is None or time.time() - row["fetched_at"] > self.settings.web_cache_ttl_h * 3600:
            return None
        return json.loads(row["results"])

    def _store(self, key: str, query: str, params: dict[str, Any], results: list) -> None:
        with self._conn() as conn:
            conn.execute(
                upsert("web_cache", CACHE_COLUMNS, ("key",)),
                (key, query, json.dumps(params), json.dumps(results), time.time()),
            )

    def search(
        self,
        queries: Sequence[str],
        trusted_only: bool | None = None,
        domains: Sequence[str] | None = None,
    ) -> WebOutcome:
        """``trusted_only`` and ``domains`` override the settings for one run."""
        trusted = self.settings.web_trusted_only if trusted_only is None else trusted_only
        params = self.params(trusted, domains)
        out = WebOutcome(queries=list(queries), domains=params.get("include_domains"))
        raw: list[dict[str, Any]] = []
        for query in queries:
            key = hashlib.sha256(json.dumps([query, params], sort_keys=True).encode()).hexdigest()
            results = self._cached(key)
            if results is not None:
                out.cache_hits += 1
            else:
                try:
                    out.api_calls += 1
                    response = self.client.search(
                        query, timeout=self.settings.tavily_timeout_s, **params
                    )
                    results = list((response or {}).get("results") or [])[
                        : self.settings.web_max_results
                    ]
                except Exception as exc:  # each query stands alone
                    message = explain(exc, self.settings.tavily_timeout_s)
                    log.warning("web query %r failed: %s", query, message)
                    out.errors.append({"query": query, "error": message})
                    continue
                self._store(key, query, params, results)
            raw.extend(results)
        out.received = len(raw)
        kept, out.duplicates_dropped = dedup([r for r in raw if r.get("url")])
        out.results = [to_evidence(r) for r in kept]
        return out


def to_evidence(r: dict[str, Any]) -> Evidence:
    url = str(r["url"])
    return Evidence(
        chunk_id=web_id(url),
        doc_id=web_id(url),
        filename=str(r.get("title") or urlsplit(url).netloc),
        page_start=0,
        page_end=0,
        text=str(r.get("content") or "").strip(),
        score=float(r.get("score") or 0.0),
        quality=1.0,
        source="web",
        url=url,
    )


def make_web_search(settings: Settings) -> WebSearch | None:
    """The researcher's web hook, or None when there is no key (then nothing calls out)."""
    if settings.tavily_api_key is None:
        return None
    searcher = WebSearcher(settings)

    def search(
        queries: list[str], trusted: bool | None = None, domains: list[str] | None = None
    ) -> dict[str, Any]:
        return searcher.search(queries, trusted, domains).as_dict()

    return search
