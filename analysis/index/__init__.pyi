"""The on-disk index of a collection of transcripts (DuckDB), updated incrementally."""

from ._build import (
    IndexProblem as IndexProblem,
    IndexSummary as IndexSummary,
    default_index_path as default_index_path,
    identity as identity,
    update_index as update_index,
)
from ._read import (
    IndexReader as IndexReader,
)
from ._rows import (
    TABLES as TABLES,
)
