"""TSQ Workbench: load agent transcripts and judge each turn's tool choice."""

from typing import Any

from ._agreement import AgreementReport, agreement_report, pair_agreement
from ._catalog import catalog_from_entries
from ._catalogs import (
    MergeReport,
    TurnCatalog,
    baseline_catalog,
    catalog_for_turn,
    load_live_dump,
    merge_catalogs,
)
from ._frames import sessions_frame, tool_calls_frame, turns_frame
from ._judgments import ExternalColumns, load_judgments
from ._labels import (
    FieldSpec,
    LabelConfig,
    LabelError,
    LabelSet,
    default_config,
    read_config,
    read_labels,
)
from ._lint import CODES, Finding, lint
from ._loader import load, load_catalog
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
from ._otlp import export_otlp_json, export_request
from ._reconcile import (
    AdjudicationStore,
    Decision,
    Proposal,
    Study,
    comparisons,
    default_store_path,
    load_study,
    propose,
    reconcile,
    redundant_calls,
    suggest_cause,
)
from ._render import CONDITIONS, RenderedTurn, RenderOptions, render_call, render_turn
from ._report import IngestReport, ingest_report
from ._samples import sample_data_dir
from ._study_charts import (
    adjudication_load_chart,
    ai_sides_chart,
    before_after_chart,
    causes_chart,
    raw_agreement_chart,
)
from ._study_tables import StudyTables, study_tables

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
    "LabelConfig",
    "LabelError",
    "LabelSet",
    "LoadResult",
    "MergeReport",
    "ParseIssue",
    "Proposal",
    "RenderOptions",
    "RenderedTurn",
    "Session",
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
    "adjudicate_open",
    "adjudication_load_chart",
    "agreement_report",
    "ai_sides_chart",
    "baseline_catalog",
    "before_after_chart",
    "catalog_for_turn",
    "catalog_from_entries",
    "causes_chart",
    "comparisons",
    "default_config",
    "default_store_path",
    "export_otlp_json",
    "export_request",
    "ingest_report",
    "judge_rendered",
    "lint",
    "load",
    "load_catalog",
    "load_judgments",
    "load_live_dump",
    "load_study",
    "merge_catalogs",
    "pair_agreement",
    "propose",
    "raw_agreement_chart",
    "read_config",
    "read_labels",
    "reconcile",
    "redundant_calls",
    "render_call",
    "render_turn",
    "sample_data_dir",
    "sessions_frame",
    "study_tables",
    "suggest_cause",
    "tool_calls_frame",
    "turns_frame",
]

# The judge needs the Anthropic SDK, slow to import; load it on first use only.
_JUDGE_EXPORTS = {
    "JudgeConfig",
    "JudgeError",
    "judge_rendered",
}
_ADJUDICATOR_EXPORTS = {"adjudicate_open"}


def __getattr__(name: str) -> Any:
    if name in _JUDGE_EXPORTS:
        from . import _judge

        return getattr(_judge, name)
    if name in _ADJUDICATOR_EXPORTS:
        from . import _adjudicator

        return getattr(_adjudicator, name)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
