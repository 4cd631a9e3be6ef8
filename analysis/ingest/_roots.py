"""Where a path given from outside may lead: inside a data root, once ``~``, ``..`` and links
are resolved.

The workbench served to others reads only inside its data root (``TSQ_DATA_ROOT``); the loader
and the study reader take the same root and leave out any file inside a folder that is a link
to somewhere outside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

OUTSIDE_REASON = "leads outside the data root; not read"
"""The parse issue of a file (or a link) found in a folder that resolves outside the root."""


class OutsideRoot(ValueError):
    """A path that leads outside the data root; the message is one sentence."""


def inside_root(path: str | Path, root: str | Path) -> bool:
    """Whether ``path`` is ``root`` or lies under it, once both are resolved.

    ``~`` is expanded and symlinks and ``..`` are resolved first, so a link inside ``root``
    that points outside it is outside. Neither path needs to exist.
    """
    resolved = Path(path).expanduser().resolve()
    base = Path(root).expanduser().resolve()
    return resolved.is_relative_to(base)


def confine(
    typed: str | Path, root: str | Path | None, also: Sequence[str | Path] = ()
) -> tuple[Path, Path | None]:
    """The path to read for ``typed`` and the root it lies inside: ``(path, root)``.

    ``~`` is expanded; a relative path starts at ``root``. Without a root, any path is allowed
    and the root returned is None. With one, the path must resolve inside ``root`` or inside
    one of the folders ``also`` names (the bundled samples, say), else :class:`OutsideRoot`.
    """
    path = Path(typed).expanduser()
    if root is None:
        return path, None
    base = Path(root).expanduser()
    if not path.is_absolute():
        path = base / path
    for allowed in (base, *(Path(folder) for folder in also)):
        if inside_root(path, allowed):
            return path, allowed
    raise OutsideRoot(
        f"{typed} is outside the data root this workbench may read, so it is refused."
    )
