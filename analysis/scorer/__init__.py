"""The step scorer: a small model trained on people's step labels (and, optionally, an LLM
judge's votes) that scores every step cheaply, measured against people on labels it never saw.

Names load on first use (see ``__init__.pyi``, read by type checkers too)."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
