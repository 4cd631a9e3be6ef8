"""TSQ Workbench: load agent transcripts and judge each tool decision."""

from . import (
    align as align,
    catalog as catalog,
    council as council,
    export as export,
    findings as findings,
    index as index,
    ingest as ingest,
    judge as judge,
    llm as llm,
    models as models,
    render as render,
    report as report,
    scorer as scorer,
    study as study,
    views as views,
)
from ._format import (
    PERCENT_COLUMNS as PERCENT_COLUMNS,
    counted as counted,
    interval as interval,
    no_interval as no_interval,
    share as share,
)
from ._glossary import (
    GLOSSARY as GLOSSARY,
    Term as Term,
    meaning as meaning,
    named as named,
    words as words,
)
from ._intervals import (
    MIN_SESSIONS as MIN_SESSIONS,
    TOO_FEW_SESSIONS as TOO_FEW_SESSIONS,
    Interval as Interval,
    paired_session_bootstrap as paired_session_bootstrap,
    session_bootstrap as session_bootstrap,
    session_bootstrap_difference as session_bootstrap_difference,
    session_bootstrap_of as session_bootstrap_of,
)
from ._samples import (
    sample_data_dir as sample_data_dir,
)
from ._serving import (
    ANONYMOUS as ANONYMOUS,
    ANONYMOUS_WARNING as ANONYMOUS_WARNING,
    DEFAULT_AUTH_HEADER as DEFAULT_AUTH_HEADER,
    Serving as Serving,
    UnknownVisitor as UnknownVisitor,
    is_loopback as is_loopback,
    visitor_identity as visitor_identity,
)
from .catalog import (
    catalog_for_turn as catalog_for_turn,
    load_live_dump as load_live_dump,
)
from .export import (
    chat_attributes as chat_attributes,
    export_otlp_json as export_otlp_json,
)
from .findings import (
    Finding as Finding,
    collect_findings as collect_findings,
    findings_for_step as findings_for_step,
    why_this_score as why_this_score,
)
from .ingest import (
    ingest_report as ingest_report,
    load as load,
)
from .judge import (
    JudgeSpec as JudgeSpec,
    default_spec as default_spec,
    load_judgments as load_judgments,
    merge_judgments as merge_judgments,
    of_judge as of_judge,
    read_spec as read_spec,
)
from .models import (
    Judgment as Judgment,
    LoadResult as LoadResult,
    ParseIssue as ParseIssue,
    Session as Session,
    Step as Step,
    ToolCall as ToolCall,
    ToolCatalog as ToolCatalog,
    ToolDef as ToolDef,
    Turn as Turn,
    Vote as Vote,
)
from .render import (
    CONDITIONS as CONDITIONS,
    JudgeInput as JudgeInput,
    judge_inputs as judge_inputs,
    render_call as render_call,
    render_step as render_step,
    render_turn as render_turn,
    turn_steps as turn_steps,
)
from .report import (
    build_report as build_report,
)
from .study import (
    LabelStore as LabelStore,
    Study as Study,
    adjudication_load_chart as adjudication_load_chart,
    agreement_report as agreement_report,
    ai_sides_chart as ai_sides_chart,
    before_after_chart as before_after_chart,
    causes_chart as causes_chart,
    comparisons as comparisons,
    load_study as load_study,
    propose as propose,
    raw_agreement_chart as raw_agreement_chart,
    study_tables as study_tables,
)
from .views import (
    ablation_chart as ablation_chart,
    ablation_steps as ablation_steps,
    ablation_table as ablation_table,
    ablation_turns as ablation_turns,
    ambiguous_steps as ambiguous_steps,
    catalog_frame as catalog_frame,
    catalog_needs as catalog_needs,
    explain_turns as explain_turns,
    findings_chart as findings_chart,
    findings_summary as findings_summary,
    review_queue as review_queue,
    session_overview as session_overview,
    sessions_frame as sessions_frame,
    tool_usage as tool_usage,
    tool_usage_chart as tool_usage_chart,
    turn_scores_chart as turn_scores_chart,
    turn_table as turn_table,
    turns_frame as turns_frame,
    votes_frame as votes_frame,
    worst_steps as worst_steps,
)
