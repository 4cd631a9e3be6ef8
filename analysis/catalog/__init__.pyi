"""The tool menus an agent had: the baseline, Claude Code's and Codex's versioned built-ins, live
dumps, and the menu each turn is judged against."""

from ._live import (
    catalog_from_document as catalog_from_document,
    catalog_from_entries as catalog_from_entries,
    looks_like_catalog as looks_like_catalog,
    read_catalog_file as read_catalog_file,
    tool_def_fields as tool_def_fields,
)
from ._menus import (
    MergeReport as MergeReport,
    TurnCatalog as TurnCatalog,
    baseline_catalog as baseline_catalog,
    catalog_for_turn as catalog_for_turn,
    live_dump_from_bytes as live_dump_from_bytes,
    load_live_dump as load_live_dump,
    merge_catalogs as merge_catalogs,
    reference_menu as reference_menu,
)
from ._versions import (
    builtin_tool_versions as builtin_tool_versions,
    examined_versions as examined_versions,
    nearest_examined as nearest_examined,
    version_key as version_key,
)
