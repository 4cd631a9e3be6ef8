"""The ChainPoll judge: rubric, votes, cost estimates, and judgment files."""

from ._audit import (
    AUDIT_FILE as AUDIT_FILE,
    DAY_CAP_ENV as DAY_CAP_ENV,
    DAY_CAP_SECRET as DAY_CAP_SECRET,
    DEFAULT_DAY_CAP as DEFAULT_DAY_CAP,
    DEFAULT_RUN_CAP as DEFAULT_RUN_CAP,
    LOCAL as LOCAL,
    RUN_CAP_ENV as RUN_CAP_ENV,
    RUN_CAP_SECRET as RUN_CAP_SECRET,
    AuditLog as AuditLog,
    AuditRow as AuditRow,
    CapError as CapError,
    RunEntry as RunEntry,
    SpendingCaps as SpendingCaps,
    allowance_refusal as allowance_refusal,
    audit_path as audit_path,
    cap_refusal as cap_refusal,
    close_run as close_run,
    open_run as open_run,
    spending_caps as spending_caps,
)
from ._cascade import (
    CascadePart as CascadePart,
    cascade_id as cascade_id,
    cascade_in_words as cascade_in_words,
    in_cascade as in_cascade,
    judged_before as judged_before,
)
from ._chainpoll import (
    JudgeConfig as JudgeConfig,
    default_cache_dir as default_cache_dir,
    judge_rendered as judge_rendered,
    judgment as judgment,
)
from ._cost import (
    RunEstimate as RunEstimate,
    context_refusal as context_refusal,
    estimate_figures as estimate_figures,
    estimate_run as estimate_run,
    start_refusal as start_refusal,
)
from ._engine import (
    CONFIRM_ABOVE_USD as CONFIRM_ABOVE_USD,
    JudgeOptions as JudgeOptions,
    PlannedUnits as PlannedUnits,
    RunOutcome as RunOutcome,
    RunPlan as RunPlan,
    RunRefused as RunRefused,
    UnitSource as UnitSource,
    execute as execute,
    prepare_run as prepare_run,
)
from ._results import (
    ExternalColumns as ExternalColumns,
    VerdictChange as VerdictChange,
    changed_verdicts as changed_verdicts,
    judge_name as judge_name,
    judge_names as judge_names,
    load_judgments as load_judgments,
    majority_label as majority_label,
    merge_judgments as merge_judgments,
    of_judge as of_judge,
    rater_in_words as rater_in_words,
    scorers_among as scorers_among,
    several_judges as several_judges,
)
from ._rubric import (
    DEFAULT_SPEC_NAME as DEFAULT_SPEC_NAME,
    RUBRIC as RUBRIC,
)
from ._spec import (
    MAX_EXAMPLES as MAX_EXAMPLES,
    MAX_RUBRIC_BYTES as MAX_RUBRIC_BYTES,
    MAX_SPEC_BYTES as MAX_SPEC_BYTES,
    JudgeExample as JudgeExample,
    JudgeSpec as JudgeSpec,
    JudgeSpecError as JudgeSpecError,
    default_spec as default_spec,
    default_spec_path as default_spec_path,
    read_spec as read_spec,
    spec_from_text as spec_from_text,
    spec_toml as spec_toml,
    uploaded_spec as uploaded_spec,
)
from ._summary import (
    run_summary as run_summary,
)
