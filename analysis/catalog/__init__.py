"""The tool menus an agent had: the baseline, Claude Code's versioned built-ins, live dumps, and
the menu each turn is judged against.

Names load on first use (see ``__init__.pyi``, read by type checkers too)."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
