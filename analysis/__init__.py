"""TSQ Workbench: load agent transcripts and judge each turn's tool choice."""

from typing import TYPE_CHECKING, Any

from ._agreement import AgreementReport, agreement_report, pair_agreement
from ._catalog import catalog_from_entries
from ._catalogs import (
    MergeReport,
    TurnCatalog,
    baseline_catalog,
    catalog_for_turn,
    live_dump_from_bytes,
    load_live_dump,
    merge_catalogs,
)
from ._frames import sessions_frame, tool_calls_frame, turns_frame
from ._judgments import ExternalColumns, load_judgments, merge_judgments
from ._labels import (
    FieldSpec,
    LabelConfig,
    LabelError,
    LabelSet,
    default_config,
    read_config,
    read_labels,
)
from ._lint import (
    CODES,
    Finding,
    findings_for_condition,
    findings_for_step,
    findings_for_turn,
    is_about_input,
    lint,
    votes_in_words,
    why_this_score,
)
from ._loader import inside_root, load, load_catalog
from ._models import (
    AssistantMessage,
    LoadResult,
    ParseIssue,
    Session,
    SubagentRun,
    ToolCall,
    ToolCatalog,
    ToolDef,
    ToolResult,
    Turn,
    TurnEvent,
    TurnJudgment,
    Usage,
    Vote,
)
from ._otlp import chat_attributes, export_otlp_json, export_request
from ._reconcile import (
    AdjudicationStore,
    Decision,
    Proposal,
    Study,
    all_decisions,
    comparisons,
    default_store_path,
    load_study,
    propose,
    reconcile,
    redundant_calls,
    suggest_cause,
)
from ._render import (
    CONDITIONS,
    JudgeInput,
    RenderOptions,
    judge_inputs,
    render_call,
    render_step,
    render_turn,
)
from ._report import IngestReport, ingest_report
from ._review import (
    ablation_steps,
    ablation_turns,
    ambiguous_steps,
    ambiguous_turns,
    explain_turns,
    findings_summary,
    review_queue,
    turns_overview,
    votes_frame,
    worst_steps,
)
from ._samples import sample_data_dir
from ._steps import Step, select_steps, turn_steps
from ._study_tables import StudyTables, study_tables
from ._usage import catalog_frame, catalog_needs, menu_comparison, tool_usage
from ._views import (
    ablation_table,
    findings_frame,
    judgment_of,
    judgments_frame,
    session_overview,
    step_table,
    step_to_open,
    turn_scores,
    turn_table,
)

if TYPE_CHECKING:  # imported on first use: Altair and the chart renderer are slow to import
    from ._adjudicator import adjudicate_open
    from ._charts import (
        ablation_chart,
        findings_chart,
        score_distribution_chart,
        step_scores_chart,
        tool_usage_chart,
        turn_scores_chart,
    )
    from ._export_charts import chart_to_png, chart_to_svg
    from ._html_report import (
        ReportSection,
        build_report,
        render_report,
        report_sections,
        study_sections,
    )
    from ._judge import JudgeConfig, JudgeError, judge_rendered
    from ._study_charts import (
        adjudication_load_chart,
        ai_sides_chart,
        before_after_chart,
        causes_chart,
        raw_agreement_chart,
    )

__all__ = [
    "CODES",
    "CONDITIONS",
    "AdjudicationStore",
    "AgreementReport",
    "AssistantMessage",
    "Decision",
    "ExternalColumns",
    "FieldSpec",
    "Finding",
    "IngestReport",
    "JudgeConfig",
    "JudgeError",
    "JudgeInput",
    "LabelConfig",
    "LabelError",
    "LabelSet",
    "LoadResult",
    "MergeReport",
    "ParseIssue",
    "Proposal",
    "RenderOptions",
    "ReportSection",
    "Session",
    "Step",
    "Study",
    "StudyTables",
    "SubagentRun",
    "ToolCall",
    "ToolCatalog",
    "ToolDef",
    "ToolResult",
    "Turn",
    "TurnCatalog",
    "TurnEvent",
    "TurnJudgment",
    "Usage",
    "Vote",
    "ablation_chart",
    "ablation_steps",
    "ablation_table",
    "ablation_turns",
    "adjudicate_open",
    "adjudication_load_chart",
    "agreement_report",
    "ai_sides_chart",
    "all_decisions",
    "ambiguous_steps",
    "ambiguous_turns",
    "baseline_catalog",
    "before_after_chart",
    "build_report",
    "catalog_for_turn",
    "catalog_frame",
    "catalog_from_entries",
    "catalog_needs",
    "causes_chart",
    "chart_to_png",
    "chart_to_svg",
    "chat_attributes",
    "comparisons",
    "default_config",
    "default_store_path",
    "explain_turns",
    "export_otlp_json",
    "export_request",
    "findings_chart",
    "findings_for_condition",
    "findings_for_step",
    "findings_for_turn",
    "findings_frame",
    "findings_summary",
    "ingest_report",
    "inside_root",
    "is_about_input",
    "judge_inputs",
    "judge_rendered",
    "judgment_of",
    "judgments_frame",
    "lint",
    "live_dump_from_bytes",
    "load",
    "load_catalog",
    "load_judgments",
    "load_live_dump",
    "load_study",
    "menu_comparison",
    "merge_catalogs",
    "merge_judgments",
    "pair_agreement",
    "propose",
    "raw_agreement_chart",
    "read_config",
    "read_labels",
    "reconcile",
    "redundant_calls",
    "render_call",
    "render_report",
    "render_step",
    "render_turn",
    "report_sections",
    "review_queue",
    "sample_data_dir",
    "score_distribution_chart",
    "select_steps",
    "session_overview",
    "sessions_frame",
    "step_scores_chart",
    "step_table",
    "step_to_open",
    "study_sections",
    "study_tables",
    "suggest_cause",
    "tool_calls_frame",
    "tool_usage",
    "tool_usage_chart",
    "turn_scores",
    "turn_scores_chart",
    "turn_steps",
    "turn_table",
    "turns_frame",
    "turns_overview",
    "votes_frame",
    "votes_in_words",
    "why_this_score",
    "worst_steps",
]

# Imported on first use, so that ``import analysis`` (and the CLI) stays quick: the judge needs
# the Anthropic SDK; charts, their export and the HTML report need Altair and vl-convert.
_LAZY_EXPORTS = {
    "JudgeConfig": "_judge",
    "JudgeError": "_judge",
    "judge_rendered": "_judge",
    "ablation_chart": "_charts",
    "findings_chart": "_charts",
    "score_distribution_chart": "_charts",
    "step_scores_chart": "_charts",
    "tool_usage_chart": "_charts",
    "turn_scores_chart": "_charts",
    "chart_to_png": "_export_charts",
    "chart_to_svg": "_export_charts",
    "ReportSection": "_html_report",
    "build_report": "_html_report",
    "render_report": "_html_report",
    "report_sections": "_html_report",
    "study_sections": "_html_report",
    "adjudicate_open": "_adjudicator",
    "adjudication_load_chart": "_study_charts",
    "ai_sides_chart": "_study_charts",
    "before_after_chart": "_study_charts",
    "causes_chart": "_study_charts",
    "raw_agreement_chart": "_study_charts",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY_EXPORTS.get(name)
    if module_name is not None:
        from importlib import import_module

        return getattr(import_module(f".{module_name}", __name__), name)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
