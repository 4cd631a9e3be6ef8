"""TSQ Workbench: load agent transcripts and judge each turn's tool choice."""

from typing import Any

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
from ._render import CONDITIONS, RenderedTurn, RenderOptions, render_call, render_turn
from ._report import IngestReport, ingest_report
from ._samples import sample_data_dir

__all__ = [
    "CODES",
    "CONDITIONS",
    "AssistantMessage",
    "ExternalColumns",
    "Finding",
    "IngestReport",
    "JudgeConfig",
    "JudgeError",
    "LoadResult",
    "MergeReport",
    "ParseIssue",
    "RenderOptions",
    "RenderedTurn",
    "Session",
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
    "baseline_catalog",
    "catalog_for_turn",
    "catalog_from_entries",
    "export_otlp_json",
    "export_request",
    "ingest_report",
    "judge_rendered",
    "lint",
    "load",
    "load_catalog",
    "load_judgments",
    "load_live_dump",
    "merge_catalogs",
    "render_call",
    "render_turn",
    "sample_data_dir",
    "sessions_frame",
    "tool_calls_frame",
    "turns_frame",
]

# The judge needs the Anthropic SDK, slow to import; load it on first use only.
_JUDGE_EXPORTS = {
    "JudgeConfig",
    "JudgeError",
    "judge_rendered",
}


def __getattr__(name: str) -> Any:
    if name in _JUDGE_EXPORTS:
        from . import _judge

        return getattr(_judge, name)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
