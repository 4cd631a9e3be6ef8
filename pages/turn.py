"""Turn: what the judge saw, how each judge voted, and why the turn scored what it scored."""

import json

import streamlit as st

from analysis import render_turn
from analysis._lint import findings_for_turn, why_this_score
from workbench_ui import chosen_session_and_turn, data_source

st.title("Turn")
workspace = data_source()
session, turn = chosen_session_and_turn(workspace)

judgments = [
    j
    for j in workspace.judgments
    if j.session_id == session.session_id and j.turn_index == turn.index
]
conditions = [j.condition for j in judgments] or ["full"]
condition = (
    st.segmented_control(
        "Judge condition",
        conditions,
        default="full" if "full" in conditions else conditions[0],
        key="turn_condition",
    )
    or conditions[0]
)
judgment = next((j for j in judgments if j.condition == condition), None)
findings = findings_for_turn(workspace.findings, session.session_id, turn.index, condition)

st.subheader("Why this score")
score = "unscored" if judgment is None or judgment.score is None else f"{judgment.score:.2f}"
st.metric("TSQ", score, help="Fraction of valid votes that called the tool choice correct.")
st.text(why_this_score(findings, judgment))

rendered = render_turn(session, turn, condition)
ask_column, context_column = st.columns(2)
ask_column.markdown("**The ask**")
ask_column.text(rendered.ask)
context_column.markdown("**Prior context the judge got**")
context_column.text(rendered.prior_context or "(none: first turn)")
st.markdown("**Model output the judge read**")
st.caption(f"catalog: {rendered.catalog_basis}, {len(rendered.tools)} tools")
st.code(rendered.output or "(no output)", language=None)

st.subheader("Votes")
if judgment is None:
    st.info("Not judged yet under this condition. Run the judge from the Judge page.")
else:
    columns = st.columns(max(1, len(judgment.votes)))
    for number, (column, vote) in enumerate(zip(columns, judgment.votes, strict=False), start=1):
        column.markdown(f"**Judge {number}: {vote.verdict}**")
        column.text(vote.reasoning)
    if judgment.n_discarded:
        st.warning(f"{judgment.n_discarded} of {judgment.n_requested} votes were discarded.")

st.subheader("Findings")
if findings:
    st.dataframe(
        [f.model_dump(include={"severity", "code", "message"}) for f in findings], hide_index=True
    )
else:
    st.caption("No findings for this turn.")
with st.expander("Judge input as text"):
    st.code(rendered.prompt_text(), language=None)
with st.expander("Tool calls and results"):
    st.code(
        json.dumps(
            [c.model_dump(mode="json", exclude={"subagent"}) for c in turn.tool_calls()], indent=1
        ),
        language="json",
    )
