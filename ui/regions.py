"""A part of a page that is replaced whole when what it shows changes, not patched in place.

Streamlit draws a rerun over the run before: an element drawn where an old one was replaces
it, a container drawn where a container was takes over the old one's children, and whatever
the new run has not reached stays on the page, faded, until the run ends. A view that changes
kind therefore kept its old widgets beside the new ones: after "This answers it" the paused
run's passage picker stayed, faded, beside the completed answer for the whole of the next run.

An element drawn where a container was removes the container and all it held at once, and
``st.empty()`` is such an element. It cannot simply be drawn first in the view's own place:
Streamlit's message queue composes two deltas for one place into the last one, so the browser
would get only the new container, which takes over the old children. The view therefore has
two places and moves to the other one when it changes: the new view starts in a place that
held an empty element, and an empty element goes where the old view was. A rerun of the same
view draws over it in its place, as before, so nothing flickers and an expander the analyst
opened stays open.
"""

from __future__ import annotations

from collections.abc import Hashable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator


def region(key: str, shows: Hashable) -> DeltaGenerator:
    """A container for the view ``key``, which now shows ``shows`` (e.g. a run and its status):
    a new one, with the old one cleared away, when ``shows`` differs from what this session
    drew there last."""
    seen = f"region-{key}"
    last = st.session_state.get(seen)
    if last is not None and last[0] == shows:
        side = last[1]
    else:
        side = 0 if last is None else 1 - last[1]
        st.session_state[seen] = (shows, side)
    places = [st.container() if i == side else st.empty() for i in (0, 1)]
    return places[side]
