"""Session: TSQ per turn, split votes highlighted; open a turn from the chart or the table."""

import polars as pl
import streamlit as st

from analysis._charts import turn_scores_chart
from analysis._views import turn_table
from workbench_ui import chart_downloads, chosen_session, data_source, open_page

st.title("Session")
workspace = data_source()
session = chosen_session(workspace)
if session is None:
    st.stop()
conditions = sorted(
    {j.condition for j in workspace.judgments if j.session_id == session.session_id}
)
condition = (
    st.segmented_control(
        "Judge condition",
        conditions or ["full"],
        default="full" if "full" in conditions else None,
        key="condition_pick",
    )
    or "full"
)
turns = turn_table(session, workspace.judgments, workspace.findings, condition)
if st.toggle("Ambiguous turns only (split votes)", key="ambiguous_only"):
    turns = turns.filter(pl.col("verdict_kind") == "split")
st.caption(
    f"{len(session.turns)} turns, {sum(1 for _ in session.tool_calls())} tool calls "
    f"— {session.source}"
)
scores_chart = turn_scores_chart(turns)
chart = st.altair_chart(scores_chart, on_select="rerun", key="turn_chart")
chart_downloads(scores_chart, f"tsq-per-turn-{session.session_id}")
picked = (chart.selection.get("turn_pick") or []) if chart else []
if picked:
    open_page("turn", session=session.session_id, turn=picked[0]["turn_index"])
event = st.dataframe(
    turns.select("turn_index", "ask", "tools", "score", "votes_label", "verdict_kind", "findings"),
    hide_index=True,
    on_select="rerun",
    selection_mode="single-row",
    key="turns_table",
    column_config={"score": st.column_config.NumberColumn("TSQ", format="%.2f")},
)
if event.selection.rows:
    open_page("turn", session=session.session_id, turn=turns["turn_index"][event.selection.rows[0]])
