"""The ChainPoll judge: rubric, votes, cost estimates, and judgment files."""

from ._chainpoll import (
    JudgeConfig as JudgeConfig,
    JudgeError as JudgeError,
    default_cache_dir as default_cache_dir,
    judge_rendered as judge_rendered,
    judgment as judgment,
)
from ._cost import (
    RunEstimate as RunEstimate,
    estimate_run as estimate_run,
)
from ._results import (
    ExternalColumns as ExternalColumns,
    load_judgments as load_judgments,
    merge_judgments as merge_judgments,
)
from ._rubric import (
    RUBRIC_VERSION as RUBRIC_VERSION,
)
