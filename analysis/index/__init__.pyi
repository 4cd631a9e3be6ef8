"""The on-disk index of a collection of transcripts (DuckDB), updated incrementally."""

from ._build import (
    IndexProblem as IndexProblem,
    IndexSummary as IndexSummary,
    default_index_path as default_index_path,
    export_parquet as export_parquet,
    identity as identity,
    update_index as update_index,
)
from ._collection import (
    Collection as Collection,
)
from ._plan import (
    Choice as Choice,
    JudgePlan as JudgePlan,
    direct_plan as direct_plan,
    indexed_plan as indexed_plan,
)
from ._read import (
    IndexReader as IndexReader,
    LoadedTables as LoadedTables,
    ParquetTables as ParquetTables,
)
from ._rows import (
    TABLES as TABLES,
)
from ._sample import (
    LoadedSteps as LoadedSteps,
    candidate_steps as candidate_steps,
    in_scope as in_scope,
    stratified_sample as stratified_sample,
)
from ._scoring import (
    ScoreRun as ScoreRun,
    score_collection as score_collection,
)
from ._sources import (
    FromFiles as FromFiles,
    FromIndex as FromIndex,
    FromSessions as FromSessions,
)
from ._trends import (
    DIMENSIONS as DIMENSIONS,
    Dimension as Dimension,
    Shift as Shift,
    agreement as agreement,
    judge_in_words as judge_in_words,
    moved_most as moved_most,
    readable_trends as readable_trends,
    shift as shift,
    step_scores as step_scores,
    trend_chart as trend_chart,
    trends as trends,
)
from ._watch import (
    WATCH_DIMENSIONS as WATCH_DIMENSIONS,
    WatchDimension as WatchDimension,
    WatchProblem as WatchProblem,
    WatchVerdict as WatchVerdict,
    ordered_groups as ordered_groups,
    trained_tools_of as trained_tools_of,
    watch as watch,
)
