"""Where the bundled sample data lives: inside the installed package, or beside it in a checkout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def sample_data_dir() -> Path:
    packaged = Path(str(resources.files("analysis") / "sample_data"))
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "sample_data"
