"""TSQ Workbench: load agent transcripts and judge each tool decision.

The package is grouped by pipeline stage: ``ingest``, ``catalog``, ``render``, ``llm``,
``judge``, ``index``, ``align``, ``scorer``, ``findings``, ``views``, ``study``, ``council``,
``export``, ``report``, ``claude`` and ``cli``, over the data model in ``models``.
The names a notebook needs are re-exported here; every name loads on first use, so
``import analysis`` (and ``tsq --help``) stays quick."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
