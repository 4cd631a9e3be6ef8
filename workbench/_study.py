"""The labels the Agreement, Adjudicate and Turn pages read and write."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl
import streamlit as st

import analysis
from workbench._panels import transcript_panel
from workbench._source import (
    ALIGNMENT_SOURCE,
    SOURCES,
    Workspace,
    collection_or_stop,
    confined,
    data_root,
    kept_folders,
    remember,
    remembered,
    saving_as,
    serving,
    visitor,
)
from workbench._state import Kept, Key
from workbench._text import inert


@dataclass
class StudyView:
    """A council-vs-human study and its decision store."""

    path: str
    study: analysis.Study
    store: analysis.LabelStore
    root: str | None = None
    """The folder the study was read inside (the data root or the bundled samples), if any."""

    def tables(self) -> analysis.study.StudyTables:
        """The five tables, computed once until a decision is saved (in any tab or process)."""
        return load_study_tables(self.path, str(self.store.path), self.store.version(), self.root)

    def agreement(self, by: Literal["rater", "kind"]) -> analysis.study.AgreementReport:
        """Every pair of raters (or rater kinds), with bootstrap intervals: once per study."""
        return load_agreement_report(self.path, by, self.root)


@st.cache_data(show_spinner="Loading labels…")
def load_study(path: str, root: str | None = None) -> analysis.Study:
    """The study at ``path``; with a ``root``, nothing outside it is read (links included)."""
    return analysis.load_study(path, data_root=root)


@st.cache_resource
def _open_store(path: str) -> analysis.LabelStore:
    """One store per file for the whole server: it opens a connection per call."""
    return analysis.LabelStore(path)


def decision_store(path: str | Path) -> analysis.LabelStore:
    """The label store at ``path``; one this version cannot read (a newer layout) is said in
    the store's own sentence, and the page stops."""
    try:
        return _open_store(str(path))
    except analysis.study.LabelStoreError as error:
        st.error(inert(str(error)))
        st.stop()


@st.cache_data(show_spinner="Computing the agreement tables…", max_entries=32)
def load_study_tables(
    path: str, store_path: str, version: int, root: str | None = None
) -> analysis.study.StudyTables:
    """The study's five tables for one state of its decision store: ``version`` (the store's
    latest decision id) is part of the key, so a saved decision is never served stale."""
    study = load_study(path, root)
    return analysis.study_tables(study, decision_store(store_path))


@st.cache_data(show_spinner="Computing pairwise agreement…", max_entries=32)
def load_agreement_report(
    path: str, by: Literal["rater", "kind"], root: str | None = None
) -> analysis.study.AgreementReport:
    """Pairwise agreement (1,000 bootstrap resamples a pair) once per study and grouping."""
    study = load_study(path, root)
    return analysis.agreement_report(study.labels, by=by)


def _default_study() -> str:
    return str(analysis.sample_data_dir() / "council_vs_human")


def study_source() -> StudyView:
    """The sidebar control choosing the labels (default: the bundled synthetic study); with a
    data root, labels inside it or the bundled samples only."""
    with st.sidebar:
        typed = st.text_input(
            "Labels (folder or file)",
            value=remembered(Kept.STUDY_PATH, _default_study()),
            key="study_path",
        )
        remember(Kept.STUDY_PATH, typed)
    found, root = confined(typed.strip() or _default_study(), (analysis.sample_data_dir(),))
    path = str(found)
    try:
        study = load_study(path, root)
    except analysis.study.LabelError as error:
        st.error(inert(str(error)))
        st.stop()
    store = decision_store(str(analysis.study.default_store_path(path)))
    st.sidebar.caption(f"Decisions are saved in `{store.path}`")
    if study.issues:
        with st.expander(f"{analysis.counted(len(study.issues), 'issue')} in the labels"):
            st.dataframe([issue.model_dump() for issue in study.issues], hide_index=True)
    return StudyView(path=path, study=study, store=store, root=root)


def disagreement_lead(
    session: analysis.Session,
    turn: analysis.Turn,
    judgments: list[analysis.Judgment],
    condition: str,
) -> None:
    """Opened from a disagreement of the Agreement page (``?disagreement=<step item>``, while
    that step is open): people's labels and reasons beside the judge's verdict and reasoning,
    before anything else, and a line saying the data is now the alignment sample's."""
    wanted = st.query_params.get("disagreement")
    step = st.query_params.get("step")
    if wanted is None or step is None or not step.isdigit():
        return
    call = st.query_params.get("call")
    item_id = analysis.study.step_item_id(session.session_id, turn.index, int(step), call)
    if item_id != wanted:
        return  # another step was opened since
    st.info(
        "Opened from a disagreement on the Agreement page: the data source is now the bundled "
        "alignment sample (the sidebar says so; choose another there to leave it).",
        icon=":material/compare_arrows:",
    )
    judgment = analysis.views.judgment_of(
        judgments, session.session_id, turn.index, condition, int(step), call
    )
    labels = _labels_of(study_store_path(), item_id)
    people, judge = st.columns(2, border=True)
    people.markdown("**People said**")
    for label in labels:
        people.text(
            f"{label.labeller}: {label.value}" + (f" — {label.reason}" if label.reason else "")
        )
    if not labels:
        people.caption("No one has labelled this step.")
    judge.markdown(f"**The judge said** (under the {analysis.words(condition)} condition)")
    if judgment is None:
        judge.caption("Not judged under this condition.")
    else:
        judge.text(analysis.findings.votes_in_words(judgment))
        for number, vote in enumerate(judgment.votes, start=1):
            judge.text(f"Judge {number}, {vote.verdict}: {vote.reasoning}")


def _labels_of(store_path: Path, item_id: str) -> list[analysis.study.StepLabel]:
    """People's labels of the step ``item_id`` in the store at ``store_path`` (none before the
    store's first save)."""
    if not store_path.exists():
        return []
    labels = decision_store(str(store_path)).step_labels()
    return [label for label in labels if label.item_id == item_id]


def study_store_path() -> Path:
    """Where people's step labels from the Turn page are saved: for the bundled alignment
    sample, its label store (the one ``tsq align`` keeps its split in); else the decision store
    of the study the Agreement page shows (the one typed in its sidebar, kept for this browser
    session; default: the bundled study's), beside the adjudications."""
    if remembered(Kept.DATA_SOURCE, SOURCES[0]) == ALIGNMENT_SOURCE:
        return analysis.align.sample_store().path
    typed = remembered(Kept.STUDY_PATH, _default_study()).strip() or _default_study()
    try:
        path, _ = analysis.ingest.confine(typed, data_root(), (analysis.sample_data_dir(),))
    except analysis.ingest.OutsideRoot:  # refused on the Agreement page: the bundled study's
        path = Path(_default_study())
    return analysis.study.default_store_path(path)


def people_labels() -> list[analysis.study.StepLabel]:
    """People's current step labels in the store the Turn page saves them to (none yet: no
    store)."""
    store = study_store_path()
    return decision_store(store).step_labels() if store.exists() else []


def step_label_panel(item_id: str, store_path: Path) -> None:
    """A person's label of one step's tool choice (correct or incorrect, with a reason), saved
    in the store at ``store_path`` (created on the first save). Served, it is saved under the
    visitor's identity (``visitor``); local, under the name typed, kept for this browser
    session. The step's labels so far are listed below, the latest of each labeller."""
    from analysis.study import StepLabel

    who = visitor()
    st.markdown("**Your label for this step's tool choice**")
    with st.form("step_label_form"):
        value = st.radio(
            "The tool choice was",
            ["correct", "incorrect"],
            index=None,
            horizontal=True,
            key="label_value",
        )
        reason = st.text_area("Reason", key="label_reason")
        if who is None:
            typed = st.text_input(
                "Your name", value=st.session_state.get(Kept.LABELLER, ""), key="label_labeller"
            )
        else:
            saving_as(who)
        submitted = st.form_submit_button("Save label")
        said = st.empty()  # what a save says, beside its button
    if submitted:
        name = who if who is not None else typed.strip()
        if value is None:
            said.warning("Choose correct or incorrect: no label is saved without a choice.")
        elif not name:
            said.warning("Give your name, so your labels are told apart from others'.")
        else:
            if who is None:
                st.session_state[Kept.LABELLER] = name
            decision_store(str(store_path)).save_step_label(
                StepLabel.model_validate(
                    {"item_id": item_id, "labeller": name, "value": value, "reason": reason.strip()}
                )
            )
            said.success(f"Saved: {inert(name)} labelled this step's tool choice {value}.")
    if not store_path.exists():
        st.caption(
            "Split: not assigned yet (a session is put in dev or test, for good, the "
            "first time its labels are measured: tsq align, or the Agreement page)."
        )
        return
    store = decision_store(str(store_path))
    split = store.splits().get(analysis.models.item_session_id(item_id))
    st.caption(
        f"Split: **{split.split}** (fixed when this session's labels were first measured)"
        if split is not None
        else "Split: not assigned yet (a session is put in dev or test, for good, the first "
        "time its labels are measured: tsq align, or the Agreement page)."
    )
    labels = _labels_of(store_path, item_id)
    if labels:
        # Served, the server's folders are none of a visitor's business.
        where = "" if serving().served else f", saved in {inert(str(store.path))}"
        st.caption(f"Labels of this step ({inert(item_id)}){where}")
        st.dataframe(
            [
                {
                    "labeller": label.labeller,
                    "label": label.value,
                    "reason": label.reason,
                    "labelled at": label.labelled_at.strftime("%Y-%m-%d %H:%M"),
                }
                for label in labels
            ],
            hide_index=True,
        )


def workspace_judgments() -> tuple[list[analysis.Judgment], list[str]]:
    """The judgments of the data source the other pages show (kept for this browser session),
    with the SELF_PREFERENCE warnings about them, without drawing its controls: the bundled
    sample or a local folder, plus judgments made on the Judge page. Uploaded files are per
    page: only the latter. Every judge's judgments are kept (the Agreement page compares each
    judge with people as a rater of its own)."""
    kept = (remembered(Kept.DATA_SOURCE, SOURCES[0]), remembered(Kept.DATA_FOLDER, ""))
    folders, root, _ = kept_folders(*kept)
    fresh: list[analysis.Judgment] = st.session_state.get(Key.JUDGE_RESULTS, [])
    if not folders:
        return fresh, []
    workspace = Workspace(collection_or_stop(folders, root, None), fresh)
    warnings = workspace.findings_frame.filter(pl.col("code") == "SELF_PREFERENCE")["message"]
    return workspace.all_judgments, list(dict.fromkeys(warnings))


def disagreement_panel(view: StudyView, row: dict[str, Any]) -> None:
    """One disagreement: both labels, the suggested cause, the rule, the decision, transcript."""
    spec = view.study.labels.spec(row["field"])
    st.subheader(inert(f"{row['item_id']} · {row['field']}"))
    if spec.description:
        st.caption(inert(spec.description))
    left, right = st.columns(2)
    left.metric("Human", inert(str(row["human"])))
    right.metric("Council", inert(str(row["council"])))
    st.text(cause_in_words(row))
    st.text(f"Rule proposes: {row['proposal_side'] or 'nothing'} ({row['proposal_reason']})")
    if row["adjudicator"]:
        note = f" — {row['note']}" if row["note"] else ""
        st.text(
            f"Decided by {row['adjudicator']} ({row['adjudicator_kind']}): {row['side']} side, "
            f"cause {row['cause']}{note}"
        )
    transcript_panel(view.study.sessions.get(row["item_id"]))


def cause_in_words(row: dict[str, Any]) -> str:
    """The disagreement's cause as its table row gives it (``cause``), and where it came from."""
    if row["cause"] is None:
        return "Cause: none suggested by the labels, none decided yet"
    if row["cause_from"] == "decision":
        suggested = row["suggested_cause"]
        aside = (
            f"; the labels suggested {analysis.words(suggested)}"
            if suggested and suggested != row["cause"]
            else ""
        )
        return f"Cause: {analysis.words(row['cause'])} (decided by {row['adjudicator']}{aside})"
    return f"Cause: {analysis.words(row['cause'])} (suggested by the labels; not decided yet)"


@st.cache_data(show_spinner="Measuring the trained scorer…")
def _scorer_sample(store: str, labels_version: int) -> analysis.align.RaterScore:
    return analysis.scorer.sample_scorer_versus(decision_store(store))


def bundled_scorer_versus() -> analysis.align.RaterScore:
    """The bundled scorer beside the bundled specs on the alignment sample's test labels, as
    ``tsq align --scorer sample_data/scorer`` measures it (its verdicts and its cascades),
    measured again whenever a label is saved."""
    store = analysis.align.sample_store()
    return _scorer_sample(str(store.path), store.step_labels_version())
