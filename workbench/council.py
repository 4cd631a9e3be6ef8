"""The council in the app: the Judge page's Council section, and its labels on the Agreement page.

Labels of a run are kept in ``st.session_state[Key.COUNCIL_LABELS]`` (the frame
``analysis.council.council_rows_frame`` makes); the Agreement page puts them beside the human
labels of the study it loaded when its sidebar says so.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import Literal

import polars as pl
import streamlit as st

import analysis
from analysis import sample_data_dir
from analysis.council import (
    CouncilError,
    api_keys,
    council_estimate,
    council_rows_frame,
    endpoint_refusal,
    example_config_path,
    missing_keys,
    read_council_config,
    render_session_for_council,
    run_council,
)
from analysis.llm import EndpointError, EndpointRules, LLMError
from workbench._panels import transcript_text
from workbench._source import data_root, endpoint_rules, key_environment
from workbench._state import Key
from workbench._study import StudyView, decision_store
from workbench._text import inert


def _merged(new: pl.DataFrame) -> pl.DataFrame:
    """Earlier labels with this run's on top (the same item, rater and field: the newer)."""
    old: pl.DataFrame | None = st.session_state.get(Key.COUNCIL_LABELS)
    if old is None or old.is_empty():
        return new
    return analysis.study.merged_labels(old, new)


def council_section(chosen: list[analysis.Session]) -> None:
    """Run the council on the chosen sessions: the config, the estimate, what it reads, Run."""
    with st.expander("Council: label the chosen sessions with an LLM council", expanded=True):
        typed = st.text_input(
            "Council config (TOML)", value=str(example_config_path()), key="council_config"
        )
        try:
            path, root = analysis.ingest.confine(typed, data_root(), (sample_data_dir(),))
            config = read_council_config(path, root)
        except (CouncilError, analysis.ingest.OutsideRoot) as error:
            st.error(inert(str(error)))
            return
        try:
            rules = endpoint_rules()
        except EndpointError as error:
            st.error(inert(str(error)))
            return
        refusal = endpoint_refusal(config, rules)
        if refusal:
            st.error(inert(refusal))
            return
        judges = ", ".join(member.model for member in config.stage1)
        st.caption(
            f"Stage-1 judges: {judges}; chairman: {config.chairman.model}; fields: "
            f"{', '.join(spec.name for spec in config.fields)}."
        )
        estimate = council_estimate(chosen, config)
        st.caption(f"Council estimate: {estimate.in_words()}")
        if chosen:
            st.markdown(f"**What the council reads** of {inert(chosen[0].session_id)}")
            transcript_text(render_session_for_council(chosen[0], config.budget_chars))
        env = key_environment()
        missing = missing_keys(config, env)
        if missing:
            st.info(
                f"The council needs {', '.join(missing)}: set "
                f"{'it' if len(missing) == 1 else 'them'} in the environment or in "
                ".streamlit/secrets.toml to run it."
            )
        elif st.button("Run the council", disabled=not chosen, key="council_run"):
            _run(chosen, config, env, rules)
        labels: pl.DataFrame | None = st.session_state.get(Key.COUNCIL_LABELS)
        if labels is not None and not labels.is_empty():
            st.caption(
                f"{labels.height} council labels of {labels['item_id'].n_unique()} sessions: on "
                "the Agreement page, choose “Council labels from the Judge page” in the sidebar."
            )
            st.dataframe(labels, hide_index=True)


def _run(
    chosen: list[analysis.Session],
    config: analysis.council.CouncilConfig,
    env: dict[str, str],
    rules: EndpointRules | None,
) -> None:
    bar = st.progress(0.0, text="The council is labelling…")
    done = [0]

    def advance() -> None:
        done[0] += 1
        bar.progress(done[0] / len(chosen), text=f"Labelled {done[0]} of {len(chosen)}")

    try:
        rows, stats = asyncio.run(run_council(chosen, config, None, advance, api_keys(env), rules))
    except LLMError as error:
        st.error(inert(str(error)))
        return
    st.session_state[Key.COUNCIL_LABELS] = _merged(council_rows_frame(rows))
    for item_id, rater, reason in stats.failures:
        st.warning(inert(f"{item_id} {rater}: no labels ({reason})."))
    st.success(
        f"The council labelled {len(chosen)} sessions: {len(rows)} labels; "
        f"{stats.cache_hits} answers from the cache, {stats.answers_asked} asked."
    )


@dataclass
class CouncilStudyView(StudyView):
    """The loaded study's human labels beside the council labels of the Judge page."""

    key: str = ""

    def tables(self) -> analysis.StudyTables:
        cache: dict[str, analysis.StudyTables] = st.session_state.setdefault(Key.COUNCIL_TABLES, {})
        stamp = f"{self.key}:{self.store.version()}"
        if stamp not in cache:
            cache[stamp] = analysis.study_tables(self.study, self.store)
        return cache[stamp]

    def agreement(self, by: Literal["rater", "kind"]) -> analysis.AgreementReport:
        cache: dict[str, analysis.AgreementReport] = st.session_state.setdefault(
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
