"""Streamlit resource factories: one Workbench per server process, a cached provider probe."""

from __future__ import annotations

import streamlit as st

from masis_core.config import get_settings
from masis_core.providers import ProviderStatus
from masis_core.services import Workbench

PROBE_TTL_S = 30


@st.cache_resource(show_spinner=False)
def workbench() -> Workbench:
    return Workbench(get_settings())


@st.cache_data(ttl=PROBE_TTL_S, show_spinner=False)
def provider_status() -> ProviderStatus:
    """Probing Ollama costs up to a second; once per half-minute is enough for a badge."""
    return workbench().provider_status()
