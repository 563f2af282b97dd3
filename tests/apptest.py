"""Driving the Streamlit app through ``AppTest`` the way a restarted server and a person would."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def fresh_app() -> AppTest:
    """A new AppTest with empty caches: the same as a restarted server on the same data."""
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()
    return AppTest.from_file(APP, default_timeout=120)


def settle(at: AppTest) -> AppTest:
    """Wait for the jobs the page started (runs and batches are server jobs now), then
    draw the page again, as the page's own follow-up does once a job ends."""
    from ui.resources import jobs

    assert all(job.wait(120) for job in list(jobs()._jobs.values()))
    at.run()
    assert not at.exception, at.exception
    return at
