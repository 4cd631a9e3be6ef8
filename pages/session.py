"""Session: TSQ per step, banded by turn, with each turn's TSQ; open a step or a turn."""

import polars as pl
import streamlit as st

import analysis
from analysis.views import step_scores_chart, step_table, thread_frame, turn_gaps, turn_table
from workbench import (
    chart_downloads,
    chosen_session,
    codes_in_words,
    data_source,
    inert,
    open_page,
    open_step,
    page_frame,
    show_table,
    stay_at_session,
)

page_frame("session")
st.title("Session")
workspace = data_source()
session = chosen_session(workspace)
if session is None:
    st.stop()
judgments = workspace.judgments_of(session.session_id)
conditions = sorted({j.condition for j in judgments})
condition = (
    st.segmented_control(
        "Judge condition",
        conditions or ["full"],
        default="full" if "full" in conditions else None,
        format_func=analysis.words,
        key="condition_pick",
    )
    or "full"
)
findings = workspace.findings_of(session.session_id)
turns = turn_table(session, judgments, findings, condition)
steps = step_table(session, judgments, findings, condition)
if st.toggle("Ambiguous turns only (split votes)", key="ambiguous_only"):
    turns = turns.filter(pl.col("verdict_kind") == "split")
    steps = steps.filter(pl.col("turn_index").is_in(turns["turn_index"].implode()))
st.caption(
    f"{analysis.counted(len(session.turns), 'turn')}, {analysis.counted(steps.height, 'step')}, "
    f"{analysis.counted(sum(1 for _ in session.tool_calls()), 'tool call')} — "
    f"{inert(session.source)}"
)
thread = thread_frame(session, set(workspace.collection.session_ids))
if not thread.is_empty():
    st.markdown(f"**One conversation of {thread.height} sessions**")
    st.caption(
        "Claude Code gives a resumed session a new id; the session registry chains them. "
        "History a resume replays is counted once, in the session that first had it, when "
        "both are loaded. Pick a row to open that session."
    )
    picked_session = show_table(
        thread,
        on_select="rerun",
        selection_mode="single-row",
        key="thread_table",
        column_config={
            "session_id": "session",
            "started": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm:ss"),
            "this_one": "this one",
            "loaded": "loaded here",
        },
    )
    rows = picked_session["selection"]["rows"] if picked_session else []
    if rows and thread["loaded"][rows[0]] and not thread["this_one"][rows[0]]:
        stay_at_session(thread["session_id"][rows[0]])
if steps.is_empty():
    st.info("No step to plot.")
else:
    if steps["score"].is_null().all():
        st.info(f"Not judged under {condition} yet: run the judge from the Judge page.")
    gaps = turn_gaps(session, steps)
    scores_chart = step_scores_chart(steps, gaps)
    picks = ["step_pick", "turn_pick"] + (["gap_pick"] if gaps.height else [])
    chart = st.altair_chart(scores_chart, on_select="rerun", selection_mode=picks, key="step_chart")
    chart_downloads(scores_chart, f"tsq-per-step-{session.session_id}")
    selected = chart["selection"] if chart else {}
    if picked := selected.get("step_pick"):  # a step's point, else a turn's band or gap
        point = picked[0]
        open_step(
            session.session_id,
            point["turn_index"],
            point["step_index"],
            point.get("parent_call_id"),
        )
    if picked := selected.get("turn_pick") or selected.get("gap_pick"):
        open_page("turn", session=session.session_id, turn=picked[0]["turn_index"])
event = show_table(
    turns.select(
        "turn_index",
        "ask",
        "score",
        "votes_label",
        "verdict_kind",
        "steps",
        "worst_step",
        "worst_step_score",
        codes_in_words("findings"),
        pl.col("tools").list.unique(maintain_order=True),
    ),
    on_select="rerun",
    selection_mode="single-row",
    key="turns_table",
    column_config={
        "turn_index": st.column_config.NumberColumn("turn"),
        "ask": st.column_config.TextColumn("ask", width=260),  # the scores fit beside it
        "steps": st.column_config.NumberColumn("steps judged"),
        "score": st.column_config.NumberColumn("TSQ", format="%.2f"),
        "votes_label": "votes",
        "verdict_kind": "verdict",
        "worst_step": "worst step",
        "worst_step_score": st.column_config.NumberColumn("worst step TSQ", format="%.2f"),
    },
)
if event.selection.rows:
    open_page("turn", session=session.session_id, turn=turns["turn_index"][event.selection.rows[0]])
