"""Home folder names are personal data: what is shared says ``~`` and ``USER`` instead.

``tsq send`` writes ``/home/alice/…`` as ``/home/USER/…`` (:data:`HOME_USER`); the HTML
report's file names follow the same rule, and this user's own home folder becomes ``~``.
"""

from __future__ import annotations

import re
from pathlib import Path

HOME_USER = re.compile(r"(/home/|/Users/|[A-Za-z]:\\Users\\)(?!USER\b)([^/\\\s\"']+)")
"""A user name in a home path; group 1 is the folder above it."""
_AFTER_PATH = r"(?=[/\\\s\"':,;)]|$)"


def without_home(text: str, home: str | Path | None = None) -> str:
    """``text`` with the home folder (``home``, default this user's) written ``~`` and the user
    name of any other home path written ``USER``."""
    folder = str(Path.home() if home is None else home).rstrip("/\\")
    if folder:
        text = re.sub(rf"(?<![\w.~-]){re.escape(folder)}{_AFTER_PATH}", "~", text)
    return HOME_USER.sub(lambda m: f"{m.group(1)}USER", text)
