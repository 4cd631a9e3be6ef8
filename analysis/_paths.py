"""Where the workbench keeps what it writes for a user: one data folder for every stage."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """``$TSQ_DATA_DIR`` if set, else the user's data folder (platformdirs)."""
    named = os.environ.get("TSQ_DATA_DIR")
    if named:
        return Path(named)
    from platformdirs import user_data_dir

    return Path(user_data_dir("tsq-workbench"))
