"""Catalog: the menu the judge saw, under a condition, vs the baseline, a live dump and the
trace-time catalog; an OpenAI-format session is compared with its own catalog only."""

import streamlit as st

import analysis
from analysis.export import chat_attributes
from analysis.findings import missing_from_menu
from analysis.models import ToolCatalog
from analysis.views import MENU_NAMES, PROVENANCE_WORDS, menu_comparison, snapshot_frame
from workbench import (
    chosen_session_and_turn,
    data_source,
    inert,
    page_frame,
    show_table,
)

page_frame("catalog")
st.title("Catalog")
workspace = data_source()
session, turn = chosen_session_and_turn(workspace)

dump = st.file_uploader("Live catalog dump (optional)", type=["json"], key="live_dump")
live = None
if dump is not None:
    live, dump_issues = analysis.catalog.live_dump_from_bytes(dump.getvalue(), dump.name)
    for issue in dump_issues:
        st.error(inert(str(issue)))

condition = (
    st.segmented_control(
        "Judge condition",
        analysis.CONDITIONS,
        default="full",
        format_func=analysis.words,
        key="catalog_condition",
        help="bare: only the tools this turn called are on the menu; otherwise the whole menu.",
    )
    or "full"
)
rendered = analysis.render_turn(session, turn, condition, live)
st.text(f"Judged against: {rendered.catalog_basis} — {rendered.catalog_note}")
if rendered.catalog_captured_at:
    st.caption(f"captured at {rendered.catalog_captured_at:%Y-%m-%d %H:%M:%S}")
if condition == "bare":
    st.caption("Under bare the judge's menu is only the tools this turn called.")

snapshot = session.menu_snapshot
if snapshot is not None:
    with st.expander(
        f"Menu snapshot at session start: {snapshot.recorded_at:%Y-%m-%d %H:%M:%S} "
        f"({snapshot.source})",
        expanded=True,
    ):
        st.caption(
            "What decided the menu when the session started, read by the SessionStart hook "
            "from the settings files: MCP servers configured for the folder, and permission "
            "rules (a denied tool is marked unavailable on the judge's menu)."
        )
        show_table(snapshot_frame(snapshot))
elif session.format.startswith("claude-code"):
    st.caption(
        "No menu snapshot: the session registry does not know this session "
        "(`tsq claude install` records one at every session start)."
    )

baseline = analysis.catalog.reference_menu(session, turn)
trace = session.catalog_for(turn)
tools = analysis.counted(len(rendered.tools), "tool")
st.markdown(f"**The judge's menu ({tools}) beside the others**")
st.caption(
    "A tick: the tool is on that menu. also in: the other menus that list it; only here: "
    "only the judge's menu does."
    + (
        " An OpenAI-format session: compared with its own catalog, no baseline."
        if baseline is None
        else f" baseline: {baseline.source}."
    )
)
show_table(
    menu_comparison(rendered.tools, baseline, live, trace),
    row_height=84,
    column_config={
        **{menu: st.column_config.CheckboxColumn(width="small") for menu in MENU_NAMES},
        "also_in": st.column_config.TextColumn("also in", width=140),
        "description": st.column_config.TextColumn(width="large"),
    },
)
with st.expander("The judge's menu in full: versions, the agent's own descriptions, parameters"):
    menu = analysis.catalog_frame(ToolCatalog(tools=rendered.tools))
    show_table(menu)
    st.markdown(
        "\n".join(
            f"- **{name}**: {words}"
            for name, words in PROVENANCE_WORDS.items()
            if name in set(menu["provenance"])
        )
    )
reference = baseline or trace
if live is not None and reference is not None:
    _, report = analysis.catalog.merge_catalogs(reference, live)
    st.markdown("**Merge of the live dump**")
    st.json(report.model_dump())

missing = missing_from_menu([turn], (tool.name for tool in rendered.tools))
st.markdown(f"**Tools turn {turn.index} called (its subagents too) that its judge's menu lacks**")
st.text(", ".join(missing) if missing else "none: the judge saw every tool this turn called")

st.markdown("**The chat span as it would be exported**")
st.json(chat_attributes(session, turn, rendered), expanded=False)
