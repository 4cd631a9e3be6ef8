"""Old public names that still work after a rename or a move, each with a ``DeprecationWarning``
naming the new place: a module answers to them from its ``__getattr__``."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping


def renamed_attribute(module: str, name: str, renames: Mapping[str, str]) -> object:
    """What ``renames[name]`` (a dotted name, ``analysis.findings.collect_findings``) names,
    warning that the old name is deprecated; AttributeError for a name never given."""
    if name not in renames:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    target = renames[name]
    warnings.warn(f"{name} is deprecated: use {target}", DeprecationWarning, stacklevel=3)
    home, _, attribute = target.rpartition(".")
    return getattr(importlib.import_module(home), attribute)
