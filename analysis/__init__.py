"""TSQ Workbench: load agent transcripts and judge each turn's tool choice."""

from ._catalog import catalog_from_entries
from ._frames import sessions_frame, tool_calls_frame, turns_frame
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
    Usage,
)
from ._report import IngestReport, ingest_report
from ._samples import sample_data_dir

__all__ = [
    "AssistantMessage",
    "IngestReport",
    "LoadResult",
    "ParseIssue",
    "Session",
    "SubagentRun",
    "ToolCall",
    "ToolCatalog",
    "ToolDef",
    "ToolResult",
    "Turn",
    "TurnEvent",
    "Usage",
    "catalog_from_entries",
    "ingest_report",
    "load",
    "load_catalog",
    "sample_data_dir",
    "sessions_frame",
    "tool_calls_frame",
    "turns_frame",
]
