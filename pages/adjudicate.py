"""Adjudicate: one council-vs-human disagreement at a time, saved as soon as it is decided."""

from typing import Literal

import polars as pl
import streamlit as st

import analysis
from workbench import (
    Kept,
    Key,
    disagreement_panel,
    inert,
    page_frame,
    saving_as,
    set_url,
    show_table,
    study_source,
    visitor,
)

page_frame("adjudicate")
st.title("Adjudicate")
view = study_source()
reconciled = view.tables().reconciled.filter(~pl.col("agree")).sort("item_id", "field")
open_rows = analysis.study.still_open(reconciled)
st.caption(f"{open_rows.height} of {reconciled.height} disagreements still open")

saved_message = st.session_state.pop(Key.ADJUDICATE_SAVED, None)
if saved_message:
    st.success(inert(saved_message), icon=":material/check_circle:")

review = st.toggle("Review decided disagreements too", key="review_decided")
queue = reconciled if review else open_rows
wanted = (st.query_params.get("item", ""), st.query_params.get("field", ""))
match = reconciled.filter((pl.col("item_id") == wanted[0]) & (pl.col("field") == wanted[1]))
if wanted[0] and not match.height:
    st.warning(inert(f"No disagreement {wanted[0]} · {wanted[1]} in these labels."))
if match.height:
    row = match.row(0, named=True)
elif queue.height:
    row = queue.row(0, named=True)
else:
    st.success("Every disagreement has a decision. Turn on review to revisit them.")
    st.stop()


def following(item: str, field: str) -> tuple[str, str] | None:
    """The queue's next disagreement after this one (wrapping round), if any other is left."""
    keys = list(zip(queue["item_id"].to_list(), queue["field"].to_list(), strict=True))
    later = [key for key in keys if key > (item, field)] + [
        key for key in keys if key < (item, field)
    ]
    return later[0] if later else None


# The form must save to the disagreement it showed, even if another tab decided it meanwhile.
set_url({"item": row["item_id"], "field": row["field"]})
disagreement_panel(view, row)
if row["adjudicator"]:
    st.info("Saving a decision here overrides the one above (history is kept).")

causes = view.study.config.all_causes
sides: list[Literal["human", "council"]] = ["human", "council"]
identity = visitor()  # served: who is in; local: None, and a name is typed
with st.form("decision", clear_on_submit=True):
    if identity is None:
        typed = st.text_input(
            "Adjudicator",
            value=st.session_state.get(Kept.ADJUDICATOR, ""),
            key="decision_adjudicator",
        )
    else:
        saving_as(identity)
    # Nothing is chosen for the adjudicator: a default would be a vote cast before reading.
    side = st.radio(
        "Which label stands?",
        sides,
        index=None,
        format_func=lambda s: inert(f"{s}: {row[s]}"),
        horizontal=True,
        key="decision_side",
    )
    cause = st.selectbox(
        "Cause",
        causes,
        index=None,
        placeholder="Choose the cause",
        format_func=analysis.words,
        key="decision_cause",
    )
    note = st.text_area("Note", height=80, key="decision_note")
    saved = st.form_submit_button("Save decision", key="save_decision")
    problem = st.empty()  # what stops a save, beside the button

next_key = following(row["item_id"], row["field"])
if next_key is not None and st.button("Skip to the next one", key="skip_decision"):
    set_url(dict(zip(("item", "field"), next_key, strict=True)))
    st.rerun()

history = analysis.study.decision_history(view.study, view.store, row["item_id"], row["field"])
with st.expander(f"History of this disagreement ({analysis.counted(history.height, 'decision')})"):
    if history.is_empty():
        st.caption("No one has decided it yet.")
    else:
        show_table(history)

if saved:
    who = identity if identity is not None else typed.strip()
    missing = [
        what
        for what, given in (("the adjudicator", who), ("a side", side), ("a cause", cause))
        if not given
    ]
    if missing or side is None or cause is None:
        problem.error(f"Choose {' and '.join(missing)} before saving.")
        st.stop()
    if identity is None:
        st.session_state[Kept.ADJUDICATOR] = who
    view.store.save(
        analysis.study.Decision(
            item_id=row["item_id"],
            field=row["field"],
            adjudicator=who,
            adjudicator_kind="human",
            side=side,
            value=row[side],
            cause=cause,
            note=note,
        )
    )
    left = open_rows.height - (0 if row["adjudicator"] else 1)
    st.session_state[Key.ADJUDICATE_SAVED] = (
        f"Saved: {row['item_id']} · {row['field']} → {side} ({row[side]}). "
        + (f"{left} still open; the next one is below." if left else "None left open.")
    )
    set_url(dict(zip(("item", "field"), next_key or (None, None), strict=True)))
    st.rerun()
