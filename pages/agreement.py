"""Agreement: council vs human, the five tables of a reconciled study, and any disagreement."""

from collections.abc import Callable

import altair as alt
import polars as pl
import streamlit as st

import analysis
from analysis import interval, share
from analysis.study import (
    TRAINED_SCORER_NOTE,
    judge_vs_people,
    judgment_labels,
    pair_details,
    stored_step_labels,
    tool_selection_labels,
)
from analysis.views import labelling_queue
from workbench import (
    bundled_scorer_versus,
    chart_downloads,
    decision_store,
    detail_into_view,
    disagreement_panel,
    inert,
    open_page,
    open_step,
    page_frame,
    show_table,
    study_source,
    study_store_path,
    workspace_judgments,
)
from workbench.council import council_source


@st.cache_data(show_spinner="Measuring the judge specs…")
def alignment_sample(store: str, labels_version: int) -> analysis.align.AlignReport:
    """The sample's loop, measured again whenever a label is saved (``labels_version``)."""
    return analysis.align.sample_loop(decision_store(store))


page_frame("agreement")
st.title("Agreement")
view = council_source(study_source())  # the Judge page's council run, when chosen
tables = view.tables()

counts = tables.sessions
columns = st.columns(5)
columns[0].metric("Sessions", counts.sessions)
columns[1].metric("With a disagreement", counts.with_disagreement)
columns[2].metric("Human-adjudicated", counts.human_adjudicated)
columns[3].metric("AI-adjudicated", counts.ai_adjudicated)
columns[4].metric("Still open", counts.open)

Section = tuple[str, list[Callable[[pl.DataFrame], alt.Chart | alt.LayerChart]], pl.DataFrame]
SECTIONS: list[Section] = [
    ("1 · Raw agreement", [analysis.raw_agreement_chart], tables.raw_agreement),
    ("2 · Causes", [analysis.causes_chart], tables.causes),
    ("3 · Adjudication load", [analysis.adjudication_load_chart], tables.adjudication_load),
    (
        "4 · AI adjudicator's side",
        [analysis.ai_sides_chart, analysis.study.followed_rule_chart],
        tables.ai_sides,
    ),
    ("5 · Before / after", [analysis.before_after_chart], tables.before_after),
]
for tab, (title, charts, table) in zip(st.tabs([s[0] for s in SECTIONS]), SECTIONS, strict=True):
    with tab:
        if table.is_empty():
            st.info("Nothing to show yet: no human and council labels, or no decisions.")
            continue
        for number, chart in enumerate(charts):
            drawn = chart(table)
            st.altair_chart(drawn, width="stretch")
            name = title.split(" · ")[1] + (f" {number + 1}" if len(charts) > 1 else "")
            chart_downloads(drawn, name)
        show_table(table)

st.download_button(
    "Download these tables as a report (HTML)",
    data=lambda: analysis.report.render_report(
        analysis.report.study_sections(tables), "Council vs human", "Agreement before and after"
    ),
    file_name="council-vs-human.html",
    mime="text/html",
    on_click="ignore",
    key="download_study_report",
)

st.header("Pairwise agreement")
by = st.radio("Compare", ["rater", "kind"], horizontal=True, key="agreement_by")
report = view.agreement("kind" if by == "kind" else "rater")
pairs = report.pairs_frame()
shown_field = st.selectbox(
    "Kappa intervals for",
    [*report.fields, "every field"],
    format_func=analysis.words,
    key="kappa_field",
)
drawn = analysis.study.kappa_intervals_chart(
    pairs if shown_field == "every field" else pairs.filter(pl.col("field") == shown_field)
)
st.altair_chart(drawn, width="stretch")
chart_downloads(drawn, "kappa intervals")
picked = show_table(pairs, on_select="rerun", selection_mode="single-row", key="pair_table")
if picked.selection.rows:
    row = pairs.row(picked.selection.rows[0], named=True)
    pair = report.pair(row["field"], row["rater_a"], row["rater_b"])
    with st.container(key="pair_detail"):
        st.caption(f"Confusion matrix: rows {inert(pair.rater_a)}, columns {inert(pair.rater_b)}")
        confusion = pl.DataFrame(pair.confusion, schema=pair.values, orient="row")
        show_table(confusion.insert_column(0, pl.Series(pair.rater_a, pair.values)))
    detail_into_view("pair_detail", (row["field"], row["rater_a"], row["rater_b"]))
council = report.council_frame()
if not council.is_empty():
    st.caption("Inside the council: stage-1 judges among themselves, and the chairman")
    show_table(council)


def _share(value: float | None) -> str:
    return share(value, missing="—")


def _bounds(bounds: tuple[float, float] | None, percent: bool) -> str | None:
    return f"95% interval{interval(bounds, percent)}" if bounds is not None else None


judgments, self_preference = workspace_judgments()
step_store = decision_store(study_store_path())  # where the Turn page saves labels
people = stored_step_labels(step_store)
if not judgment_labels(judgments).is_empty() or not people.is_empty():
    st.header("TSQ judge vs people")
    st.caption(
        "The TSQ judge's ChainPoll majority (full condition) on each step's tool choice against "
        "the labels people saved on the Turn page (field tool_selection)."
    )
    for message in self_preference:
        st.warning(f"SELF_PREFERENCE: {inert(message)}", icon=":material/balance:")
    labels = tool_selection_labels(judgments, step_store)
    kinds = dict(labels.raters().select("rater", "rater_kind").iter_rows())
    field = analysis.agreement_report(labels).fields.get("tool_selection")
    judge_pairs = judge_vs_people(field.pairs if field else [], kinds)
    if not judge_pairs:
        st.info(
            "No step has both the judge's label and a person's yet: label steps on the Turn "
            "page (below, the ones most worth a label)."
        )
    for pair in judge_pairs:
        trained = kinds.get(pair.rater_b) == "scorer"
        st.subheader(
            f"{inert(pair.rater_b)}{' (trained scorer)' if trained else ''} vs "
            f"{inert(pair.rater_a)}: {analysis.counted(pair.n, 'step')}"
        )
        if trained:
            st.caption(f"{inert(pair.rater_b)} is {TRAINED_SCORER_NOTE}.")
        caught = pair.class_agreement("incorrect")
        columns = st.columns(5)
        columns[0].metric(
            "Agreement", _share(pair.agreement), help=_bounds(pair.agreement_ci, True)
        )
        columns[1].metric(
            "Kappa",
            "—" if pair.kappa is None else f"{pair.kappa:.3f}",
            help=_bounds(pair.kappa_ci, False),
        )
        columns[2].metric(
            "Catches",
            _share(caught.recall if caught else None),
            help="How often the judge says incorrect when the person does.",
        )
        columns[3].metric(
            "False flags",
            _share(caught.false_rate if caught else None),
            help="How often the judge says incorrect when the person says correct.",
        )
        columns[4].metric(
            "Majority baseline",
            _share(pair.majority_baseline),
            help=f"Agreement of always answering {pair.majority_label!r}: raw agreement "
            "must beat it to mean anything.",
        )
        st.text("\n".join(pair_details(pair)))
    queue = labelling_queue(analysis.of_judge(judgments), people["item_id"].to_list())
    if not queue.is_empty():
        st.caption("Steps to label next: split votes first, then those judged incorrect")
        picked_step = show_table(
            queue.drop("item_id"),
            on_select="rerun",
            selection_mode="single-row",
            key="label_queue",
        )
        if picked_step.selection.rows:
            row = queue.row(picked_step.selection.rows[0], named=True)
            if row["step_index"] is not None:
                open_step(
                    row["session_id"], row["turn_index"], row["step_index"], row["parent_call_id"]
                )
            else:
                open_page("turn", session=row["session_id"], turn=row["turn_index"])

st.header("Judge specs vs people")
st.caption(
    "The bundled synthetic alignment set (sample_data/alignment): two judge specs measured "
    "against people's step labels on the dev split, the spec chosen on dev then measured on "
    "the held-out test split. Run your own with tsq align."
)
label_store = analysis.align.sample_store()
loop = alignment_sample(str(label_store.path), label_store.step_labels_version())
scores = analysis.align.scores_frame(loop.specs)
drawn_scores = analysis.align.spec_agreement_chart(scores)
st.altair_chart(drawn_scores, width="stretch")
chart_downloads(drawn_scores, "judge-specs-vs-people")
show_table(analysis.align.scores_table(loop.specs))
for comparison in loop.comparisons:
    st.markdown(f"- {inert(comparison.in_words())}")
scorer_folder = analysis.sample_data_dir() / "scorer"
_, card = analysis.scorer.load_scorer(scorer_folder, analysis.scorer.FEATURE_SET_VERSION)
st.subheader("A trained step scorer")
st.caption(
    "A small model trained on the same people's dev labels (sample_data/scorer, its model card "
    "below): it scores every step with no key. Train your own with tsq scorer train."
)
st.markdown(inert(analysis.scorer.card_in_words(card)))
beside = bundled_scorer_versus()
st.caption(
    f"Beside the specs on the test split, as tsq align --scorer sample_data/scorer measures it "
    f"(no worse: at most {analysis.align.NO_WORSE_MARGIN:.0%} less agreement, by the paired "
    "interval)."
    + (
        f" {beside.left_out} test steps of sessions it was trained on are left out."
        if beside.left_out
        else ""
    )
)
for verdict in beside.versus:
    st.markdown(f"- **{verdict.verdict}**: {inert(verdict.in_words())}")
if card.test is not None and card.test.reliability:
    reliability = analysis.scorer.reliability_chart(card.test)
    st.altair_chart(reliability)
    chart_downloads(reliability, "scorer-reliability")
with st.expander("Model card (card.json)"):
    st.json(card.model_dump(mode="json"), expanded=False)
if loop.disagreements:
    st.subheader("Why the judge disagrees (dev)")
    st.caption(
        "By cause: "
        + ", ".join(f"{inert(analysis.words(cause))} {n}" for cause, n in loop.causes)
        + " · by tool: "
        + ", ".join(f"{inert(tool)} {n}" for tool, n in loop.tools)
    )
    st.caption("Choose a row to open its step on the Turn page (the alignment sample's data).")
    why = pl.DataFrame(
        [
            {
                "step": d.item_id,
                "judge": d.judge_id,
                "cause": analysis.words(d.cause) if d.cause else "unset",
                "people": d.people,
                "judge said": d.judge,
                "tool": d.tool,
                "people's reason": "; ".join(d.reasons),
                "evidence": d.evidence or "",
            }
            for d in loop.disagreements
        ]
    )
    picked_why = show_table(
        why, on_select="rerun", selection_mode="single-row", key="align_disagreements"
    )
    if picked_why.selection.rows:
        step = loop.disagreements[picked_why.selection.rows[0]]
        call = {"call": step.parent_call_id} if step.parent_call_id else {}
        open_page(
            "turn",
            source="alignment",
            disagreement=step.item_id,  # the Turn page leads with it
            judge=step.judge_id,
            session=step.session_id,
            turn=step.turn_index,
            step=step.step_index if step.step_index is not None else 0,
            **call,
        )

st.header("Disagreements")
reconciled = tables.reconciled.filter(~pl.col("agree"))
filters = st.columns(3)
fields = filters[0].multiselect(
    "Field", view.study.labels.fields, format_func=analysis.words, key="dis_fields"
)
sources = filters[1].multiselect("Settled by", ["human", "ai", "rule", "open"], key="dis_sources")
causes = filters[2].multiselect(
    "Cause", view.study.config.all_causes, format_func=analysis.words, key="dis_causes"
)
shown = reconciled.filter(
    (pl.col("field").is_in(fields) if fields else pl.lit(True))
    & (pl.col("source").is_in(sources) if sources else pl.lit(True))
    & (pl.col("cause").is_in(causes) if causes else pl.lit(True))
).select(
    "item_id",
    "field",
    "human",
    "council",
    "cause",
    "proposal_side",
    "source",
    "side",
    "calibrated",
    "followed_rule",
)
st.caption(f"{shown.height} of {reconciled.height} disagreements")
chosen = show_table(shown, on_select="rerun", selection_mode="single-row", key="dis_table")
if chosen.selection.rows:
    item_id, field = shown.row(chosen.selection.rows[0])[:2]
    row = reconciled.filter((pl.col("item_id") == item_id) & (pl.col("field") == field)).row(
        0, named=True
    )
    with st.container(key="disagreement_detail"):
        disagreement_panel(view, row)
        if st.button("Adjudicate this disagreement", key="adjudicate_this"):
            open_page("adjudicate", item=item_id, field=field)
    detail_into_view("disagreement_detail", (item_id, field))
