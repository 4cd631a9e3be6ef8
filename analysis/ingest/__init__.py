"""Reading transcripts: format sniffing, JSON lines, Claude Code, OpenAI-format and OTLP files, and
the ingest report.

Names load on first use (see ``__init__.pyi``, read by type checkers too)."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
