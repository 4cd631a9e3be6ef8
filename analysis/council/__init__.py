"""The LLM council: stage-1 judges label each session on every field, with their reasoning;
the chairman reads the session and their labels and gives the council's label.

Names load on first use (see ``__init__.pyi``, read by type checkers too)."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
