"""The shipped Streamlit settings are the safe ones: loopback only, no error details."""

from __future__ import annotations

import tomllib

from tests.proc import ROOT


def test_the_ui_binds_loopback_and_hides_error_details_by_default() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    # There is no login: a wider address must be a deliberate --server.address.
    assert config["server"]["address"] == "127.0.0.1"
    # Tracebacks carry paths and settings; the browser gets a generic message.
    assert config["client"]["showErrorDetails"] == "none"
