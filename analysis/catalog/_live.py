"""Tool catalogs as they arrive in files: OpenAI function format or Anthropic tool format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis._jsonio import read_json_document, timestamp
from analysis.models import ParseIssue, Provenance, ToolCatalog, ToolDef


def tool_def_fields(entry: Any) -> dict[str, Any] | None:
    """Name, description and parameters of one catalog entry, in any format we accept.

    Accepted: ``{"type": "function", "function": {...}}`` (OpenAI), ``{"name",
    "description", "parameters"}`` and ``{"name", "description", "input_schema"}``
    (Anthropic, and the live dump an agent writes).
    """
    if not isinstance(entry, dict):
        return None
    if isinstance(entry.get("function"), dict):
        entry = entry["function"]
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        return None
    parameters = entry.get("parameters", entry.get("input_schema", {}))
    description = entry.get("description")
    return {
        "name": name,
        "description": description if isinstance(description, str) else None,
        "parameters": parameters if isinstance(parameters, dict) else {},
    }


def looks_like_catalog(document: Any) -> bool:
    """A JSON list of tool definitions (and not, say, a list of chat messages)."""
    if isinstance(document, dict) and isinstance(document.get("tools"), list):
        document = document["tools"]
    if not isinstance(document, list) or not document:
        return False
    return all(
        isinstance(entry, dict) and "role" not in entry and tool_def_fields(entry) is not None
        for entry in document
    )


def catalog_from_entries(
    entries: list[Any],
    source: str,
    provenance: Provenance,
    issues: list[ParseIssue],
    captured_at: str | None = None,
) -> ToolCatalog:
    tools = []
    for position, entry in enumerate(entries):
        fields = tool_def_fields(entry)
        if fields is None:
            issues.append(
                ParseIssue(
                    file=source,
                    reason=f"catalog entry {position} is not a tool definition; skipped",
                )
            )
            continue
        tools.append(ToolDef(provenance=provenance, **fields))
    return ToolCatalog.model_validate(
        {"tools": tools, "source": source, "captured_at": captured_at}
    )


def catalog_from_document(
    document: Any, source: str, provenance: Provenance, issues: list[ParseIssue]
) -> ToolCatalog:
    if isinstance(document, dict):
        captured_at = document.get("captured_at")
        return catalog_from_entries(
            document.get("tools", []),
            source,
            provenance,
            issues,
            timestamp(captured_at),
        )
    return catalog_from_entries(document, source, provenance, issues)


def read_catalog_file(
    path: str | Path, provenance: Provenance
) -> tuple[ToolCatalog | None, list[ParseIssue]]:
    """A catalog from a JSON file; problems (unreadable, not JSON, not tools) are issues."""
    display = str(path)
    try:
        data = Path(path).expanduser().read_bytes()
    except OSError as error:
        return None, [ParseIssue(file=display, reason=f"cannot be read ({error.strerror})")]
    return catalog_from_bytes(data, display, provenance)


def catalog_from_bytes(
    data: bytes, display: str, provenance: Provenance
) -> tuple[ToolCatalog | None, list[ParseIssue]]:
    """A catalog from a JSON document's bytes (a file, an upload); problems are issues."""
    document, issues = read_json_document(data, display)
    if document is None:
        return None, issues
    if not looks_like_catalog(document):
        issues.append(ParseIssue(file=display, reason="is not a list of tool definitions"))
        return None, issues
    return catalog_from_document(document, display, provenance, issues), issues
