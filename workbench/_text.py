"""Data-derived text made safe for the elements that render Markdown."""

from __future__ import annotations

import re

_MARKDOWN_ACTIVE = re.compile(r"([\\`*_\[\]()#!<>|~$:])")


def inert(text: str) -> str:
    """Data-derived text for elements that render Markdown (alerts, subheaders): every
    character that could start a link, image, HTML, directive or formatting is escaped."""
    return _MARKDOWN_ACTIVE.sub(r"\\\1", text)
