"""The council in the app: the Judge page's Council section, and its labels on the Agreement page.

Labels of a run are kept in ``st.session_state[Key.COUNCIL_LABELS]`` (the frame
``analysis.council.council_rows_frame`` makes); the Agreement page puts them beside the human
labels of the study it loaded when its sidebar says so.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

import polars as pl
import streamlit as st

import analysis
from analysis import sample_data_dir
from analysis.council import (
    CouncilError,
    CouncilOptions,
    CouncilPlan,
    example_config_path,
    execute,
    prepare_run,
    read_council_config,
    render_session_for_council,
)
from analysis.judge import LOCAL, SpendingCaps
from analysis.llm import EndpointError
from workbench._panels import max_cost_input, spent_today, transcript_text
from workbench._source import data_root, endpoint_rules, key_environment
from workbench._state import Key
from workbench._study import StudyView, decision_store
from workbench._text import inert


def council_section(
    chosen: list[analysis.Session], who: str = LOCAL, caps: SpendingCaps | None = None
) -> None:
    """Run the council on the chosen sessions: the config, the estimate, what it reads, Run;
    ``who`` runs it (the spending log's name), held served to ``caps``."""
    with st.expander("Council: label the chosen sessions with an LLM council", expanded=True):
        typed = st.text_input(
            "Council config (TOML)", value=str(example_config_path()), key="council_config"
        )
        max_cost = max_cost_input("council_max_cost", "tsq council", "the estimate")
        try:
            path, root = analysis.ingest.confine(typed, data_root(), (sample_data_dir(),))
            config = read_council_config(path, root)
            rules = endpoint_rules()
        except (CouncilError, analysis.ingest.OutsideRoot, EndpointError) as error:
            st.error(inert(str(error)))
            return
        plan = prepare_run(
            chosen,
            config,
            CouncilOptions(max_cost=max_cost),
            keys=key_environment(),
            endpoints=rules,
            who=who,
            caps=caps,
        )
        if plan.refusal:
            st.error(inert(plan.refusal))
            return
        _describe(chosen, plan)
        spent_today(who, caps)
        if plan.key_refusal:
            st.info(plan.key_refusal)
        if plan.cost_refusal or plan.spending_refusal:
            st.error(inert(plan.cost_refusal or plan.spending_refusal or ""))
        if plan.run_refusal is None:
            confirmed = plan.confirm is None or st.checkbox(  # a new amount, a new confirmation
                inert(plan.confirm), key=f"council_confirm_{plan.confirm}"
            )
            if st.button(
                "Run the council", disabled=not chosen or not confirmed, key="council_run"
            ):
                _run(plan)
        labels: pl.DataFrame | None = st.session_state.get(Key.COUNCIL_LABELS)
        if labels is not None and not labels.is_empty():
            st.caption(
                f"{analysis.counted(labels.height, 'council label')} of "
                f"{analysis.counted(labels['item_id'].n_unique(), 'session')}: on "
                "the Agreement page, choose “Council labels from the Judge page” in the sidebar."
            )
            st.dataframe(labels, hide_index=True)


def _describe(chosen: list[analysis.Session], plan: CouncilPlan) -> None:
    """Who is on the council, its estimate, and what it reads of the first chosen session."""
    config = plan.config
    judges = ", ".join(member.model for member in config.stage1)
    st.caption(
        f"Stage-1 judges: {judges}; chairman: {config.chairman.model}; fields: "
        f"{', '.join(spec.name for spec in config.fields)}."
    )
    st.caption(f"Council estimate: {plan.estimate.in_words()}")
    if chosen:
        st.markdown(f"**What the council reads** of {inert(chosen[0].session_id)}")
        transcript_text(render_session_for_council(chosen[0], config.budget_chars))


def _run(plan: CouncilPlan) -> None:
    total = len(plan.sessions)
    bar = st.progress(0.0, text="The council is labelling…")
    done = [0]

    def advance() -> None:
        done[0] += 1
        bar.progress(done[0] / total, text=f"Labelled {done[0]} of {total}")

    outcome = execute(plan, advance, st.session_state.get(Key.COUNCIL_LABELS))
    if outcome.error:
        st.error(inert(outcome.error))
        return
    st.session_state[Key.COUNCIL_LABELS] = outcome.labels
    for failure in outcome.failures:
        st.warning(inert(failure))
    st.success("  \n".join(inert(line) for line in outcome.summary))


@dataclass
class CouncilStudyView(StudyView):
    """The loaded study's human labels beside the council labels of the Judge page."""

    key: str = ""

    def tables(self) -> analysis.study.StudyTables:
        cache: dict[str, analysis.study.StudyTables] = st.session_state.setdefault(
            Key.COUNCIL_TABLES, {}
        )
        stamp = f"{self.key}:{self.store.version()}"
        if stamp not in cache:
            cache[stamp] = analysis.study_tables(self.study, self.store)
        return cache[stamp]

    def agreement(self, by: Literal["rater", "kind"]) -> analysis.study.AgreementReport:
        cache: dict[str, analysis.study.AgreementReport] = st.session_state.setdefault(
            Key.COUNCIL_AGREEMENT, {}
        )
        stamp = f"{self.key}:{by}"
        if stamp not in cache:
            cache[stamp] = analysis.agreement_report(self.study.labels, by=by)
        return cache[stamp]


def with_council(study: analysis.Study, labels: pl.DataFrame) -> analysis.Study:
    """``study``'s human (and adjudicator) labels, with ``labels`` as its LLM and council raters;
    decisions recorded about its own council are left behind."""
    people = study.labels.frame.filter(pl.col("rater_kind").is_in(["human", "adjudicator"]))
    council = labels.select(
        *(pl.col(name).cast(pl.String) for name in ("item_id", "rater", "rater_kind", "field")),
        pl.col("value").cast(pl.String),
        pl.lit("Judge page").alias("file"),
        pl.lit(None, dtype=pl.Int64).alias("line"),
    )
    frame = pl.concat([people, council.select(people.columns)])
    counted = labels.select("item_id", pl.col("redundant_calls").cast(pl.Int64)).unique(
        "item_id", keep="first"
    )
    own = study.labels.items.join(counted, on="item_id", how="anti")
    items = pl.concat([own, counted.select(own.columns)])
    merged = analysis.study.LabelSet(frame, study.config, list(study.labels.issues), items)
    return analysis.Study(labels=merged, sessions=study.sessions, issues=list(study.issues))


def council_source(view: StudyView) -> StudyView:
    """With the sidebar's “Council labels from the Judge page” on (offered once the council has
    run), the study's human labels beside those council labels; else ``view``."""
    labels: pl.DataFrame | None = st.session_state.get(Key.COUNCIL_LABELS)
    if labels is None or labels.is_empty():
        return view
    use = st.sidebar.toggle(
        "Council labels from the Judge page",
        key="agreement_council",
        help="The council's labels from the Judge page in place of the study's own council, "
        "beside its human labels. Decisions are kept apart from the study's.",
    )
    if not use:
        return view
    study = with_council(view.study, labels)
    key = hashlib.sha1(labels.write_csv().encode(), usedforsecurity=False).hexdigest()
    store = decision_store(
        str(analysis.study.default_store_path(f"{view.path}-council-{key[:10]}"))
    )
    return CouncilStudyView(
        path=view.path,
        study=study,
        store=store,
        key=f"{view.path}:{key}",
    )
