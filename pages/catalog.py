"""Catalog: the menu the judge saw vs the baseline, the live dump and the trace-time catalog."""

import streamlit as st

import analysis
from analysis._otlp import chat_attributes
from workbench_ui import chosen_session_and_turn, data_source

st.title("Catalog")
workspace = data_source()
session, turn = chosen_session_and_turn(workspace)

dump = st.file_uploader("Live catalog dump (optional)", type=["json"], key="live_dump")
live = None
if dump is not None:
    live, dump_issues = analysis.live_dump_from_bytes(dump.getvalue(), dump.name)
    for issue in dump_issues:
        st.error(str(issue))

choice = analysis.catalog_for_turn(session, turn, live)
st.text(f"Judged against: {choice.basis} — {choice.note}")
if choice.captured_at:
    st.caption(f"captured at {choice.captured_at:%Y-%m-%d %H:%M:%S}")

baseline = analysis.baseline_catalog()
trace = session.catalog_for(turn)
columns = st.columns(3)
for column, (title, catalog) in zip(
    columns,
    [("The judge saw", choice.catalog), ("Baseline", baseline), ("Trace-time", trace)],
    strict=True,
):
    column.markdown(f"**{title}**")
    if catalog is None:
        column.caption("none in the input")
    else:
        column.dataframe(
            analysis.catalog_frame(catalog).drop("parameters", "claude_code_description"),
            hide_index=True,
        )
with st.expander("The judge's menu in full: versions, Claude Code's own descriptions, parameters"):
    st.dataframe(analysis.catalog_frame(choice.catalog), hide_index=True)
if live is not None:
    _, report = analysis.merge_catalogs(baseline, live)
    st.markdown("**Merge of the live dump**")
    st.json(report.model_dump())

used = list(dict.fromkeys(c.name for c in session.tool_calls()))
missing = [name for name in used if choice.catalog.get(name) is None]
st.markdown("**Tools used in this session but missing from the catalog the judge saw**")
st.text(", ".join(missing) if missing else "none")

st.markdown("**The chat span as it would be exported**")
rendered = analysis.render_turn(session, turn, "full", live)
st.json(chat_attributes(session, turn, rendered), expanded=False)
