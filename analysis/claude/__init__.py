"""Claude Code from the inside: the session registry its ``SessionStart`` hook writes, and the
menu snapshot taken when a session starts.

Kept light on purpose: the hook (``python -m analysis.claude.hook``) imports only this package
and the standard library, so that it costs Claude Code a few tens of milliseconds.
"""

from analysis.claude._registry import (
    REGISTRY_FILE,
    menu_snapshot,
    read_registry,
    record_session_start,
    registry_path,
)

__all__ = [
    "REGISTRY_FILE",
    "menu_snapshot",
    "read_registry",
    "record_session_start",
    "registry_path",
]
