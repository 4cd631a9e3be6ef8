"""Turn: its steps; for one step at a time, why it scored what it scored and what the judge saw."""

import polars as pl
import streamlit as st

import analysis
from analysis import findings_for_step, turn_table, why_this_score
from analysis.findings import (
    finding_in_words,
    findings_for_turn,
    is_about_input,
    undermining,
    votes_in_words,
)
from analysis.judge import rater_in_words
from analysis.study import step_item_id
from analysis.views import judgment_of, next_to_label, step_table
from workbench import (
    call_panel,
    chosen_session_and_turn,
    chosen_step,
    data_source,
    disagreement_lead,
    inert,
    judge_input_panel,
    open_page,
    page_frame,
    people_labels,
    scorer_explanation_panel,
    stay_at_step,
    step_label_panel,
    study_store_path,
    transcript_text,
    votes_side_by_side,
)

page_frame("turn")
st.title("Turn")
workspace = data_source()
session, turn = chosen_session_and_turn(workspace)
session_findings = workspace.findings_of(session.session_id)
session_judgments = workspace.judgments_of(session.session_id)
judgments = [j for j in session_judgments if j.turn_index == turn.index]
conditions = sorted({j.condition for j in judgments}) or ["full"]
condition = (
    st.segmented_control(
        "Judge condition",
        conditions,
        default="full" if "full" in conditions else conditions[0],
        format_func=analysis.words,
        key="turn_condition",
    )
    or conditions[0]
)
disagreement_lead(session, turn, judgments, condition)
st.caption("The ask")
transcript_text(turn.ask)
if not turn.messages:
    st.info(
        "This turn has no model response (a command such as /compact, or an interrupted "
        "ask): the agent made no choice, so there is nothing to judge."
    )
    st.stop()
summary = turn_table(session, session_judgments, session_findings, condition).filter(
    pl.col("turn_index") == turn.index
)
score = summary["score"][0]
undermined = undermining(
    findings_for_turn(session_findings, session.session_id, turn.index, condition)
)
big, beside = st.columns([1, 3]) if undermined and score is not None else (st.container(), None)
big.metric(
    "Turn TSQ",
    "—" if score is None else f"{score:.2f}",
    help="The mean TSQ of the turn's judged steps (a step's TSQ: its fraction of votes 'correct').",
)
if beside is not None:
    more = f" (and {len(undermined) - 1} more below)" if len(undermined) > 1 else ""
    beside.warning(
        inert(f"This score may not mean what it says — {undermined[0].message}{more}"),
        icon=":material/warning:",
    )
st.caption(f"{summary['verdict_kind'][0]}: {summary['votes_label'][0] or 'run the judge'}")

whole_turn = judgment_of(judgments, session.session_id, turn.index, condition)
if whole_turn is not None:
    st.subheader("Judged as one whole turn")
    turn_findings = findings_for_turn(session_findings, session.session_id, turn.index, condition)
    st.text(why_this_score(turn_findings, whole_turn))
    st.text(votes_in_words(whole_turn))
    votes_side_by_side(whole_turn)
st.subheader("Steps")
steps = step_table(session, session_judgments, session_findings, condition).filter(
    pl.col("turn_index") == turn.index
)
step = chosen_step(turn, steps, key=f"steps_{session.session_id}_{turn.index}_{condition}")
if step is None:
    st.info("No response of this turn called a tool: it has no step to judge.")
    st.stop()

under = f", in the subagent spawned by call {step.parent_call_id}" if step.parent_call else ""
st.subheader(f"Step {step.index}{inert(under)}")
judgment = judgment_of(
    judgments, session.session_id, turn.index, condition, step.index, step.parent_call_id
)
st.markdown("**Why this score**")
st.text(votes_in_words(judgment))
scored = judgment is not None and judgment.rater == "scorer"
if judgment is not None and (cascaded := analysis.judge.cascade_in_words(judgment)):
    st.caption(inert(cascaded))
if judgment is not None and scored:
    scorer_id = str(judgment.via or judgment.judge_id)
    record = workspace.collection.scorers.get(scorer_id)
    st.caption(inert(rater_in_words(scorer_id, {scorer_id: record})))
    scorer_explanation_panel(session, step, judgment, record)
findings = findings_for_step(
    session_findings, session.session_id, turn.index, step.index, condition, step.parent_call_id
)
about_judge = [f for f in findings if not is_about_input(f)]
for finding in about_judge:
    st.text(finding_in_words(finding))
if not about_judge:
    st.caption(
        "No finding about this step."
        if scored
        else "No finding about what the judge saw for this step."
    )
about_input = [f for f in findings if is_about_input(f)]
if about_input:
    st.caption("About the input, as a platform receiving this trace would see it")
    for finding in about_input:
        st.text(finding_in_words(finding))

st.markdown("**What the judge saw**" if not scored else "**What an LLM judge would read**")
if scored:
    st.caption("A trained scorer reads the step's features, not a prompt.")
judge = analysis.default_spec()  # the Judge page's spec: an upload there stays on that page
this_step = judge_input_panel(session, step, condition, None if scored else judgment, judge)

st.markdown("**Votes**")
if judgment is None or scored:
    if scored:
        st.caption("A trained step scorer casts no votes: its score is a probability.")
    st.info(
        f"Not judged{' by an LLM judge' if scored else ''} under the {condition} condition. "
        f"Judging this step with {judge.model}: {this_step}",
        icon=":material/gavel:",
    )
    if st.button("Judge this session on the Judge page", key="judge_this_session"):
        open_page("judge", session=session.session_id)
else:
    votes_side_by_side(judgment)
item = step_item_id(session.session_id, turn.index, step.index, step.parent_call_id)


@st.fragment
def label_this_step() -> None:
    """A person's label of this step, and the way on to the next unlabelled one: saving a
    label reruns this part of the page alone, not the whole turn."""
    step_label_panel(item, study_store_path())
    labelled = [label.item_id for label in people_labels()]
    upcoming = next_to_label(workspace.judgments, labelled, item)
    if st.button(
        "Next unlabelled step",
        disabled=upcoming is None,
        key="next_unlabelled",
        help="The next judged step nobody has labelled: split votes first, then steps judged "
        "incorrect.",
    ):
        assert upcoming is not None
        stay_at_step(
            upcoming["session_id"],
            upcoming["turn_index"],
            upcoming["step_index"],
            upcoming["parent_call_id"],
        )


@st.fragment
def calls_of_this_step(calls: list[analysis.ToolCall]) -> None:
    """The step's ``calls`` and their results, drawn only while their expander is open (a
    browser spends a good part of a page's drawing on them); open, it stays open from step to
    step."""
    shown = st.expander(
        f"This step's calls and their results ({len(calls)})", key="step_calls", on_change="rerun"
    )
    if shown.open:
        with shown:
            for call in calls:
                call_panel(call)


label_this_step()
calls_of_this_step(step.message.tool_calls)
