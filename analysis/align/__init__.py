"""The alignment loop: people's step labels and their dev/test split, judge specs measured
against people, compared, and improved from their disagreements (``tsq align``).

Names load on first use (see ``__init__.pyi``, read by type checkers too)."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
