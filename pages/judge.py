"""Judge: run the ChainPoll judge on chosen sessions, with a cost estimate and the ablation;
and the LLM council, whose labels go to the Agreement page."""

from pathlib import Path
from typing import Literal

import streamlit as st

import analysis
from analysis.llm import LLMError, parse_model_name
from workbench import (
    Key,
    bundled_scorer_versus,
    chart_downloads,
    data_source,
    endpoint_choice,
    endpoint_rules,
    inert,
    key_environment,
    max_cost_input,
    page_frame,
    scorer_folders,
    show_table,
    spender,
    spending_caps,
    spent_today,
)
from workbench.council import council_section

page_frame("judge")
st.title("Judge")
workspace = data_source()
known = workspace.collection.session_ids
ids = st.multiselect(
    "Sessions",
    known,
    default=[i for i in known if i == st.query_params.get("session")],
    format_func=workspace.collection.session_names.__getitem__,
    key="judge_sessions",
    help="Type to find sessions by their title, first ask or id.",
)
uploaded = st.file_uploader(
    "Judge spec (optional)",
    type=["toml"],
    key="judge_spec_file",
    help="A judge spec with its rubric inline (see the documentation's Judge specs); without "
    "one, the built-in tsq-rubric/3.",
    max_upload_size=1,  # MB: a spec is at most analysis.judge.MAX_SPEC_BYTES
)
try:
    spec = (
        analysis.judge.uploaded_spec(uploaded.name, uploaded.getvalue())
        if uploaded is not None
        else analysis.default_spec()
    )
except analysis.judge.JudgeSpecError as error:
    st.error(inert(f"{error}."))
    st.stop()
if st.session_state.get(Key.JUDGE_SPEC_SHOWN) != spec.judge_id:  # a new spec: its own settings
    st.session_state[Key.JUDGE_SPEC_SHOWN] = spec.judge_id
    st.session_state[Key.JUDGE_MODEL] = spec.model
    st.session_state[Key.JUDGE_VOTES] = spec.votes
    st.session_state[Key.JUDGE_BASE_URL] = spec.base_url or ""
model = st.text_input(
    "Judge model",
    key=Key.JUDGE_MODEL,
    help="provider:model (openai:gpt-4o, gemini:gemini-2.5-pro); a bare id or display name "
    "is Anthropic's.",
)
votes = st.slider("Votes per step", 1, 10, key=Key.JUDGE_VOTES)
left, right = st.columns(2)
picked = left.segmented_control(
    "Unit",
    ["step", "turn"],
    default="step",
    key="judge_unit",
    help="A step is one model response that called tools; a turn is everything after one ask.",
)
unit: Literal["step", "turn"] = "turn" if picked == "turn" else "step"
selection = right.text_input(
    "Steps",
    value="all",
    key="judge_steps",
    help="all, first (after each ask) or sample:N",
    disabled=unit == "turn",
)
subagents = st.toggle("Also judge the subagents' steps", key="judge_subagents")
ablation = st.toggle(
    "Ablation: bare / catalog without call / full",
    value=False,
    key="judge_ablation",
    help="Judge each unit under three conditions (three times the requests), as tsq judge "
    "--ablation does.",
)
cascading = st.toggle(
    "Cascade: the LLM judge only where a trained scorer is least sure",
    key="judge_cascade",
    disabled=unit == "turn" or ablation,
    help="As tsq judge --cascade: the judge is asked about the steps whose scorer probability "
    "is nearest an even chance, within a budget or the N least sure; the others keep the "
    "scorer's verdict. Every judgment says which of the two gave it.",
)
folder = budget = uncertain = None
if cascading and unit == "step" and not ablation:
    scorers = scorer_folders(workspace)
    shown_scorer = st.selectbox("Trained scorer", list(scorers), key="judge_cascade_scorer")
    folder = scorers[shown_scorer] if shown_scorer else None
    by_budget = (
        st.segmented_control(
            "The judge takes",
            ["a budget", "the N least sure steps"],
            default="a budget",
            key="judge_cascade_by",
        )
        != "the N least sure steps"
    )
    if by_budget:
        budget = st.number_input(
            "Budget (USD)", min_value=0.0, value=1.0, step=0.5, key="judge_cascade_budget"
        )
    else:
        uncertain = int(
            st.number_input("Least sure steps", min_value=0, value=20, key="judge_cascade_n")
        )
max_cost = max_cost_input("judge_max_cost", "tsq judge", "the estimate (with prompt caching)")
who = spender()  # written in the spending log; served, the visitor whose allowance it spends
caps = spending_caps()  # served: the operator's caps on a run and a person's day; local: none
try:
    provider = parse_model_name(model)[0]
    rules = endpoint_rules()  # served: only the operator's endpoints, each with its own key
except LLMError as error:
    st.error(inert(str(error)))
    st.stop()
base_url = endpoint_choice(rules, provider, spec.base_url)

try:
    spec = spec.with_changes(model=model, votes=votes, base_url=base_url)
except ValueError:
    st.error("Give the judge model.")
    st.stop()
chosen = [s for s in map(workspace.session, ids) if s is not None]
judge_named = f"Judge: {inert(spec.judge_id)} (the spec's name and a hash of what it asks)"
if not chosen:
    spent_today(who, caps)
    st.caption(judge_named)
    st.info(
        "Choose one or more sessions above: what judging them would cost, and the button to "
        "run the judge, appear then."
    )
else:
    options = analysis.judge.JudgeOptions(
        unit=unit,
        selection=selection,
        subagents=subagents,
        ablation=ablation,
        max_cost=max_cost,
        cascade=Path(folder) if folder else None,
        budget=budget,
        uncertain=uncertain,
    )
    plan = analysis.judge.prepare_run(
        analysis.index.FromSessions(chosen),
        spec,
        options,
        keys=key_environment(),
        endpoints=rules,
        kept=st.session_state.get(Key.JUDGE_RESULTS, []),
        who=who,
        caps=caps,
    )
    for line in plan.sample:  # the cascade in words
        st.caption(inert(line))
    if plan.estimate is not None:
        st.caption(plan.estimate.in_words(unit, spec.votes, len(plan.conditions)))
    spent_today(who, caps)
    st.caption(judge_named)
    if plan.refusal:  # steps it cannot choose, a request beyond the model's context: nothing to run
        st.error(inert(plan.refusal))
        st.stop()
    if plan.key_refusal:
        st.info(f"{plan.key_refusal} Everything else in the workbench works without one.")
    if plan.cost_refusal or plan.spending_refusal:
        st.error(inert(plan.cost_refusal or plan.spending_refusal or ""))
    if plan.run_refusal is None:
        confirmed = plan.confirm is None or st.checkbox(  # a new amount, a new confirmation
            inert(plan.confirm), key=f"judge_confirm_{plan.confirm}"
        )
        runnable = bool(plan.units) or plan.cascade is not None
        if st.button("Run the judge", disabled=not runnable or not confirmed, key="judge_run"):
            total = max(len(plan.units or []), 1)
            bar = st.progress(0.0, text="Judging…")
            done = [0]

            def advance() -> None:
                done[0] += 1
                bar.progress(done[0] / total, text=f"Judged {done[0]} of {total}")

            outcome = analysis.judge.execute(plan, on_unit=advance)
            if outcome.error:
                st.error(inert(outcome.error))
            else:
                st.session_state[Key.JUDGE_RESULTS] = outcome.merged
                st.success("  \n".join(inert(line) for line in outcome.summary))

if cascading:
    beside = bundled_scorer_versus()
    drawn = analysis.scorer.cascade_chart(beside.cascade)
    st.altair_chart(drawn, width="stretch")
    chart_downloads(drawn, "cascade-cost-vs-agreement")
    st.caption(
        "Measured on the bundled alignment sample's test labels, as tsq align --scorer "
        "sample_data/scorer measures it (tsq align --scorer DIR --json measures yours: its "
        "cascade entries). Each point's interval resamples sessions; the tooltip gives the "
        "judge's cost where its judgments recorded one."
    )
    show_table(analysis.scorer.cascade_table(beside.cascade))

judged = [j for j in workspace.judgments if not ids or j.session_id in ids]
if judged:
    chart = analysis.ablation_chart(analysis.ablation_table(judged))
    st.altair_chart(chart)
    chart_downloads(chart, "ablation")

council_section(chosen, who, caps)
