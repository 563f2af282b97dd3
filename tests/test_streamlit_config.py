"""The shipped Streamlit settings are the safe ones: loopback only, no error details."""

from __future__ import annotations

import tomllib

from tests.proc import ROOT


def test_the_ui_binds_loopback_and_hides_error_details_by_default() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    # MASIS_AUTH=none has no sign-in: a wider address must be a deliberate --server.address
    # (and app.py refuses it unless MASIS_ALLOW_OPEN=1 or accounts are on).
    assert config["server"]["address"] == "127.0.0.1"
    # The sign-in and sharing forms post with Streamlit's XSRF token.
    assert config["server"]["enableXsrfProtection"] is True
    # Tracebacks carry paths and settings; the browser gets a generic message.
    assert config["client"]["showErrorDetails"] == "none"
