"""The one place a model is called: requests with a forced tool (structured output), parsing
and re-asking malformed answers, retries, the answer cache, tokens and cost.

Names load on first use (see ``__init__.pyi``, read by type checkers too)."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
