"""Adjudicate: one council-vs-human disagreement at a time, saved as soon as it is decided."""

import polars as pl
import streamlit as st

import analysis
from workbench_ui import disagreement_panel, study_source

st.title("Adjudicate")
view = study_source()
reconciled = view.reconciled().filter(~pl.col("agree"))
open_rows = reconciled.filter(pl.col("adjudicator_kind").is_null())
st.caption(f"{open_rows.height} of {reconciled.height} disagreements still open")

review = st.toggle("Review decided disagreements too", key="review_decided")
queue = reconciled if review else open_rows
wanted = (st.query_params.get("item", ""), st.query_params.get("field", ""))
match = reconciled.filter((pl.col("item_id") == wanted[0]) & (pl.col("field") == wanted[1]))
if match.height:
    row = match.row(0, named=True)
elif queue.height:
    row = queue.row(0, named=True)
else:
    st.success("Every disagreement has a decision. Turn on review to revisit them.")
    st.stop()

# The form must save to the disagreement it showed, even if another tab decided it meanwhile.
st.query_params["item"], st.query_params["field"] = row["item_id"], row["field"]
disagreement_panel(view, row)
if row["adjudicator"]:
    st.info("Saving a decision here overrides the one above (history is kept).")

causes = view.study.config.all_causes
default_cause = row["cause"] or row["suggested_cause"]
with st.form("decision", clear_on_submit=True):
    who = st.text_input(
        "Adjudicator",
        value=st.session_state.get("kept_adjudicator", ""),
        key="decision_adjudicator",
    )
    side = st.radio(
        "Which label stands?",
        ["human", "council"],
        index=1 if row["proposal_side"] == "council" else 0,
        format_func=lambda s: f"{s}: {row[s]}",
        horizontal=True,
        key="decision_side",
    )
    cause = st.selectbox(
        "Cause",
        causes,
        index=causes.index(default_cause) if default_cause in causes else 0,
        key="decision_cause",
    )
    note = st.text_area("Note", height=80, key="decision_note")
    saved = st.form_submit_button("Save decision")
if saved:
    if not who.strip():
        st.error("Name the adjudicator before saving.")
        st.stop()
    st.session_state["kept_adjudicator"] = who.strip()
    view.store.save(
        analysis.Decision(
            item_id=row["item_id"],
            field=row["field"],
            adjudicator=who.strip(),
            adjudicator_kind="human",
            side=side,
            value=row[side],
            cause=cause,
            note=note,
        )
    )
    st.toast(f"Saved: {row['item_id']} {row['field']} → {side}")
    st.query_params.clear()
    st.rerun()
