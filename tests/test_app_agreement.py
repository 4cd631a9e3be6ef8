"""The Agreement and Adjudicate pages (Streamlit AppTest) on the bundled and a fresh study."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from conftest import clear_streamlit_caches, open_page, plain
from streamlit.testing.v1 import AppTest

import analysis

STUDY = analysis.sample_data_dir() / "council_vs_human"

pytestmark = pytest.mark.usefixtures("fresh_app")


def study_page(path: str, study: Path | None = None, **params: str) -> AppTest:
    """A page on the given study's labels (default: the bundled study)."""
    state = {"kept_study_path": str(study)} if study is not None else None
    return open_page(path, state, **params)


def select(at: AppTest, key: str, row: int) -> AppTest:
    at.session_state[key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    return at.run()


def test_agreement_page_shows_the_five_tables_and_the_seed_figures():
    at = study_page("pages/agreement.py")
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Sessions"] == "450"
    assert metrics["Human-adjudicated"] == "61"
    assert metrics["AI-adjudicated"] == "280"
    assert len(at.tabs) == 5
    raw = at.dataframe[0].value.set_index("field")  # shares in percent, as shown
    assert raw.loc["tool_policy", "agreement"] == pytest.approx(48.0)
    assert round(raw.loc["all fields", "agreement"], 1) == 66.6
    before_after = at.dataframe[4].value.set_index("field")
    assert round(before_after.loc["tool_policy", "after"]) == 95
    titles = [json.loads(chart.proto.spec)["title"] for chart in at.get("vega_lite_chart")]
    assert titles == [
        "Council vs human: raw agreement per field",
        "Disagreement causes per field",
        "Adjudication load per field",
        "Which side the AI adjudicator chose",
        "Did the AI adjudicator follow the rule?",
        "Calibrated label vs human reference",
        "Kappa per pair of raters: task_completed",
        "Judge specs vs people: agreement on dev, and on test for the spec chosen",
        "The trained step scorer: reliability on the test part",
    ]
    labels = [element.proto.label for element in at.get("download_button")]
    assert labels.count("PNG") == len(titles)
    assert labels.count("SVG") == len(titles)
    # Shares are written one way: percent with one decimal, as the charts' ".1%".
    raw_columns = json.loads(at.dataframe[0].proto.columns)
    assert raw_columns["agreement"]["type_config"] == {"type": "number", "format": "%.1f%%"}
    before_after_columns = json.loads(at.dataframe[4].proto.columns)
    assert {before_after_columns[c]["type_config"]["format"] for c in ("before", "after")} == {
        "%.1f%%"
    }
    assert "Download these tables as a report (HTML)" in labels


@pytest.mark.slow
def test_pair_confusion_matrix_and_disagreement_drill_down():
    at = study_page("pages/agreement.py")
    pairs = at.dataframe[5].value
    first = pairs.iloc[0]
    at = select(at, "pair_table", 0)
    confusion = at.dataframe[6].value
    assert int(confusion.drop(columns=confusion.columns[0]).to_numpy().sum()) == first["n"]

    at.multiselect(key="dis_fields").set_value(["tool_policy"]).run()
    at = select(at, "dis_table", 0)
    assert not at.exception
    shown = [t.value for t in at.text]
    assert any(line.startswith("Rule proposes: ") for line in shown)
    assert any("Decided by" in line for line in shown)
    assert any(plain(s.value).endswith("· tool_policy") for s in at.subheader)
    at.button(key="adjudicate_this").click().run()
    assert at.title[0].value == "Adjudicate"


@pytest.fixture
def fresh_study(tmp_path) -> Path:
    """Ten bundled sessions, no decisions yet."""
    folder = tmp_path / "study"
    folder.mkdir()
    with (STUDY / "labels.csv").open() as handle:
        rows = list(csv.reader(handle))
    keep = {f"cvh-{n:03d}" for n in range(1, 11)}
    with (folder / "labels.csv").open("w", newline="") as handle:
        csv.writer(handle).writerows([rows[0], *(r for r in rows[1:] if r[0] in keep)])
    return folder


def decide(at: AppTest, who: str, side: str, note: str) -> AppTest:
    at.text_input(key="decision_adjudicator").set_value(who)
    at.radio(key="decision_side").set_value(side)
    causes = at.selectbox(key="decision_cause")
    causes.set_value(causes.options[0])
    at.text_area(key="decision_note").set_value(note)
    at.button(key="save_decision").click()
    return at.run()


def test_adjudication_is_saved_and_survives_a_restart_and_two_tabs(fresh_study):
    first_tab = study_page("pages/adjudicate.py", fresh_study)
    second_tab = study_page("pages/adjudicate.py", fresh_study)
    assert not first_tab.exception
    caption = first_tab.caption[0].value
    open_before = int(caption.split(" of ")[0])
    first_item = plain(first_tab.subheader[0].value)
    assert first_item == plain(
        second_tab.subheader[0].value
    )  # both tabs show the same disagreement

    decide(first_tab, "ana", "council", "first tab")
    # The second tab still shows the same disagreement; its save is kept too, and is the latest.
    decide(second_tab, "ben", "human", "second tab")
    store = analysis.LabelStore(analysis.study.default_store_path(fresh_study))
    saved = store.decisions()
    assert [(d.adjudicator, d.side, d.note) for d in saved] == [
        ("ana", "council", "first tab"),
        ("ben", "human", "second tab"),
    ]
    assert all(d.adjudicator_kind == "human" for d in saved)

    clear_streamlit_caches()
    restarted = study_page("pages/adjudicate.py", fresh_study)
    assert int(restarted.caption[0].value.split(" of ")[0]) == open_before - 1
    assert plain(restarted.subheader[0].value) != first_item
    tables = analysis.study_tables(analysis.load_study(fresh_study), store, resamples=0)
    assert tables.sessions.human_adjudicated == 1
    item, field = first_item.split(" · ")
    decided = tables.reconciled.filter(
        (tables.reconciled["item_id"] == item) & (tables.reconciled["field"] == field)
    ).row(0, named=True)
    assert (decided["adjudicator"], decided["side"]) == ("ben", "human")


def test_a_decision_saved_on_adjudicate_shows_on_the_agreement_tables(fresh_study):
    at = study_page("pages/agreement.py", fresh_study)  # fills the cache: nothing decided yet
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Human-adjudicated"] == "0"
    open_before = int(metrics["Still open"])

    at.switch_page("pages/adjudicate.py").run()
    item, field = plain(at.subheader[0].value).split(" · ")
    decide(at, "ana", "human", "checked the transcript")
    assert not at.exception

    at.switch_page("pages/agreement.py").run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Human-adjudicated"] == "1"
    assert int(metrics["Still open"]) <= open_before
    load = at.dataframe[2].value.set_index("field")
    assert load.loc[field, "human"] == 1
    at.multiselect(key="dis_sources").set_value(["human"]).run()
    shown = at.dataframe[-1].value
    assert list(zip(shown["item_id"], shown["field"], shown["side"], strict=True)) == [
        (item, field, "human")
    ]


def test_adjudicate_walks_the_bundled_open_disagreements_with_a_confirmation_and_history():
    open_before = analysis.study.open_disagreements(analysis.load_study(STUDY), None)
    assert open_before.height > 1
    at = study_page("pages/adjudicate.py")
    assert not at.exception
    first = f"{open_before['item_id'][0]} · {open_before['field'][0]}"
    second = f"{open_before['item_id'][1]} · {open_before['field'][1]}"
    assert plain(at.subheader[0].value) == first
    assert at.caption[0].value.startswith(f"{open_before.height} of ")
    assert at.expander[-1].label == "History of this disagreement (0 decisions)"

    decide(at, "ana", "human", "checked the transcript")
    assert not at.exception
    # The next open disagreement, with a confirmation of what was just saved.
    assert plain(at.subheader[0].value) == second
    (confirmation,) = at.success
    assert plain(confirmation.value) == (
        f"Saved: {first} → human ({open_before['human'][0]}). "
        f"{open_before.height - 1} still open; the next one is below."
    )
    assert at.caption[0].value.startswith(f"{open_before.height - 1} of ")

    # Back to the decided one: its history names who decided, the side and the note.
    at.query_params["item"], at.query_params["field"] = first.split(" · ")
    at.run()
    history = at.dataframe[-1].value
    assert history[["adjudicator", "side", "note", "kept_in"]].values.tolist() == [
        ["ana", "human", "checked the transcript", "store"]
    ]
    at.button(key="skip_decision").click().run()
    assert plain(at.subheader[0].value) == second


def test_the_decision_form_starts_blank_and_says_what_a_save_lacks():
    """No side or cause is chosen for the adjudicator; a save without them, or without a
    name, says what is missing inside the form, beside its button, and saves nothing."""
    at = study_page("pages/adjudicate.py")
    assert not at.exception
    assert at.radio(key="decision_side").value is None
    assert at.selectbox(key="decision_cause").value is None
    before = at.caption[0].value
    at.text_input(key="decision_adjudicator").set_value("ana")
    at.button(key="save_decision").click()
    at.run()
    assert [e.value for e in at.error] == ["Choose a side and a cause before saving."]
    assert at.caption[0].value == before, "nothing was saved"


def test_a_disagreement_names_the_cause_its_row_shows_and_where_it_came_from():
    """The panel's cause is the table's ``cause`` column: a decided one says who decided it."""
    study = analysis.load_study(STUDY)
    reconciled = analysis.study.study_tables(study, None).reconciled.filter(~pl.col("agree"))
    decided = reconciled.filter(pl.col("cause_from") == "decision").row(0, named=True)
    at = study_page("pages/adjudicate.py", item=decided["item_id"], field=decided["field"])
    assert not at.exception
    said = [t.value for t in at.text if t.value.startswith("Cause: ")]
    assert said == [
        f"Cause: {analysis.words(decided['cause'])} (decided by {decided['adjudicator']}"
        + (
            f"; the labels suggested {analysis.words(decided['suggested_cause'])})"
            if decided["suggested_cause"] not in (None, decided["cause"])
            else ")"
        )
    ]


def test_adjudicate_says_when_a_link_names_no_disagreement():
    at = study_page("pages/adjudicate.py", item="cvh-999", field="looped")
    assert not at.exception
    assert at.warning[0].value == "No disagreement cvh-999 · looped in these labels."


def test_judge_specs_vs_people_shows_the_bundled_loop_with_figures_from_the_files():
    """The Agreement page's alignment section, against figures computed here from the bundled
    label file, judgments and the split the page kept in the sample's store."""
    import csv

    from analysis.align import sample_store

    at = study_page("pages/agreement.py")
    assert not at.exception
    alignment = analysis.sample_data_dir() / "alignment"
    votes: dict[str, list[str]] = {}
    for row in csv.DictReader((alignment / "labels.csv").open()):
        item = f"{row['session_id']}:{row['turn_index']}:{row['step_index']}"
        votes.setdefault(item, []).append(row["value"])
    people = {
        item: max(set(v), key=v.count)
        for item, v in votes.items()
        if v.count("correct") != v.count("incorrect")
    }
    splits = {s: a.split for s, a in sample_store().splits().items()}
    table = next(
        frame.value for frame in at.dataframe if "agreement [95% interval]" in frame.value.columns
    )
    for name in ("default", "team-rules"):
        judged = {
            f"{line['session_id']}:{line['turn_index']}:{line['step_index']}": (
                "correct" if line["score"] >= 0.5 else "incorrect"
            )
            for line in map(
                json.loads, (alignment / "judgments" / f"{name}.judgments.jsonl").open()
            )
        }
        judge_id = json.loads(
            (alignment / "judgments" / f"{name}.judgments.jsonl").open().readline()
        )["judge_id"]
        dev = [item for item in people if splits[item.split(":")[0]] == "dev"]
        agreement = sum(judged[item] == people[item] for item in dev) / len(dev)
        row = table[(table["judge"] == judge_id) & (table["split"] == "dev")].iloc[0]
        assert row["steps"] == len(dev)
        assert row["agreement [95% interval]"].startswith(f"{agreement:.1%} [")
    texts = [plain(m.value) for m in at.markdown]
    assert any("on dev:" in t and "agrees with people more" in t for t in texts)
    assert any("on test:" in t for t in texts)


def test_a_disagreement_opens_a_turn_page_that_leads_with_it():
    """The Agreement page's "Why the judge disagrees" row opens the Turn page with these URL
    parameters: it leads with the people's labels and reasons beside the judge's verdict, and
    says the data source changed; another step opened from there has no such lead."""
    store = analysis.align.sample_store()
    loop = analysis.align.sample_loop(store)
    disagreement = loop.disagreements[0]
    labels = [label for label in store.step_labels() if label.item_id == disagreement.item_id]
    assert labels
    params = {
        "source": "alignment",
        "disagreement": disagreement.item_id,
        "judge": disagreement.judge_id,
        "session": disagreement.session_id,
        "turn": str(disagreement.turn_index),
        "step": str(disagreement.step_index),
    }
    at = open_page("pages/turn.py", **params)
    assert not at.exception
    assert at.info[0].value.startswith("Opened from a disagreement on the Agreement page")
    assert at.sidebar.radio(key="data_source").value == "Bundled alignment sample"
    texts = [t.value for t in at.text]
    for label in labels:
        said = f"{label.labeller}: {label.value}" + (f" — {label.reason}" if label.reason else "")
        assert said in texts
    verdicts = [t for t in texts if t.startswith("Judge ") and ", " in t.split(":")[0]]
    majority = Counter(t.split(", ", 1)[1].split(":")[0] for t in verdicts).most_common(1)
    assert majority[0][0] == disagreement.judge  # the judge's side of the disagreement

    other = open_page("pages/turn.py", **(params | {"step": str(disagreement.step_index + 1)}))
    assert not [i for i in other.info if i.value.startswith("Opened from a disagreement")]
