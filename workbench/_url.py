"""The URL: where the user is, changed in one step per action."""

from __future__ import annotations

import streamlit as st

PLACE = ("session", "turn", "step", "call")
"""Where the user is: in the URL, and carried by the navigation's links to every page."""


def set_url(wanted: dict[str, str | None]) -> None:
    """The URL's parameters with ``wanted`` set (None: removed), changed in one step and only
    when something changes: each change of the URL is an entry of the browser's history, and
    one action must be one entry, never a half-written URL."""
    current = st.query_params.to_dict()
    updated = {key: value for key, value in current.items() if wanted.get(key, value) is not None}
    updated |= {key: value for key, value in wanted.items() if value is not None}
    if updated != current:
        st.query_params.from_dict(updated)


def forget(*keys: str) -> None:
    set_url(dict.fromkeys(keys))
