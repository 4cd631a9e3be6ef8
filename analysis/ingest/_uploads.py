"""Uploaded files on disk: in a folder only this user can open, under names that stay in it.

The loader reads paths, so the app writes a session's uploads to a :class:`PrivateFolder`
(mode 0700) of its own and removes it when the session ends. A browser sends a file's name as
it likes: :func:`upload_name` keeps its last part, in safe characters, so no name can climb
out of the folder or hide from the loader (a leading dot).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from analysis._format import counted
from analysis.ingest._roots import inside_root

_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")
MAX_NAME_CHARS = 120


class PrivateFolder:
    """A new temporary folder only this user can open, removed by :meth:`remove`, when the
    object is collected, or when the process exits, whichever comes first."""

    def __init__(self, prefix: str = "tsq-") -> None:
        self.path = Path(tempfile.mkdtemp(prefix=prefix))  # mkdtemp makes it 0700
        self._remove = weakref.finalize(self, shutil.rmtree, self.path, ignore_errors=True)

    def remove(self) -> None:
        """Remove the folder and everything in it (once; later calls do nothing)."""
        self._remove()


def upload_name(name: str) -> str:
    """A file name for an upload called ``name``: its last part (``/`` or ``\\``), unsafe
    characters as ``_``, no leading dots or spaces, at most 120 characters with its suffix
    kept; ``upload`` when nothing is left."""
    last = re.split(r"[/\\]", name)[-1]
    cleaned = _UNSAFE.sub("_", last).lstrip(". ").rstrip(" ")
    stem, dot, suffix = cleaned.rpartition(".")
    if not dot:
        stem, suffix = cleaned, ""
    suffix = f".{suffix}" if dot and suffix else ""
    stem = stem[: MAX_NAME_CHARS - len(suffix)].rstrip(". ") or "upload"
    return f"{stem}{suffix}"


UPLOAD_FILES_ENV = "TSQ_MAX_UPLOAD_FILES"
UPLOAD_MB_ENV = "TSQ_MAX_UPLOAD_MB"
DEFAULT_UPLOAD_FILES = 100
DEFAULT_UPLOAD_MB = 200


@dataclass(frozen=True)
class UploadLimits:
    """How many files, and how many megabytes in all, one visitor may upload at once; set by
    the operator of a served workbench (``TSQ_MAX_UPLOAD_FILES``, ``TSQ_MAX_UPLOAD_MB``)."""

    files: int = DEFAULT_UPLOAD_FILES
    megabytes: float = DEFAULT_UPLOAD_MB

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> UploadLimits:
        """The operator's limits from ``env``, the defaults for those not set; raises
        ValueError, in one sentence, for a value that is not a positive number."""
        files, megabytes = env.get(UPLOAD_FILES_ENV, ""), env.get(UPLOAD_MB_ENV, "")
        try:
            limits = cls(
                files=int(files) if files.strip() else DEFAULT_UPLOAD_FILES,
                megabytes=float(megabytes) if megabytes.strip() else DEFAULT_UPLOAD_MB,
            )
        except ValueError:
            limits = cls(files=0)
        if limits.files <= 0 or not limits.megabytes > 0:
            raise ValueError(
                f"{UPLOAD_FILES_ENV}={files or '(unset)'} and {UPLOAD_MB_ENV}="
                f"{megabytes or '(unset)'} must be positive numbers, so uploads are off."
            )
        return limits

    def refusal(self, sizes: Sequence[int]) -> str | None:
        """One sentence when uploads of these sizes (bytes) are more than the limits, else
        None."""
        total = sum(sizes)
        if len(sizes) <= self.files and total <= self.megabytes * 1_000_000:
            return None
        files = counted(len(sizes), "file")
        size = f"{total / 1000:,.0f} kB" if total < 1_000_000 else f"{total / 1e6:,.1f} MB"
        return (
            f"{files} of {size} in all are more than this workbench takes "
            f"at once (at most {counted(self.files, 'file')} and "
            f"{self.megabytes:,g} MB), so none was "
            "loaded: upload fewer or smaller files."
        )


def save_uploads(folder: str | Path, files: Sequence[tuple[str, bytes]]) -> Path:
    """Write ``(name, bytes)`` uploads under ``folder``, in a subfolder named by their names
    and contents (the same uploads give the same folder, so loading them is cached), each
    under :func:`upload_name` (``-2``, ``-3``… when two names meet); returns the subfolder."""
    digest = hashlib.sha256()
    for name, data in files:
        digest.update(hashlib.sha256(name.encode()).digest() + hashlib.sha256(data).digest())
    target = Path(folder) / digest.hexdigest()[:16]
    target.mkdir(mode=0o700, parents=True, exist_ok=True)
    taken: set[str] = set()
    for name, data in files:
        safe = upload_name(name)
        stem, suffix = Path(safe).stem, Path(safe).suffix
        number = 1
        while safe.lower() in taken:
            number += 1
            safe = f"{stem}-{number}{suffix}"
        taken.add(safe.lower())
        path = target / safe
        if not inside_root(path, target):  # cannot happen with upload_name; checked anyway
            raise ValueError(f"{name!r} is not a file name")
        path.write_bytes(data)
    return target
