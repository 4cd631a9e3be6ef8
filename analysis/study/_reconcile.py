"""Council vs human disagreements: suggested causes, rule proposals, calibrated labels.

:func:`comparisons` sets the human's label beside the council's for every item and field, with
the cause the labels suggest and the field's rule's proposal; :func:`reconcile` settles each
disagreement by its latest decision, else the proposal. The study itself is loaded by
:func:`~analysis.study._study.load_study`, decisions kept in an
:class:`~analysis.study._store.LabelStore`.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from analysis.study._agreement import rater_columns
from analysis.study._config import FieldSpec
from analysis.study._rules import Proposal, Rule
from analysis.study._store import Decision, LabelStore
from analysis.study._study import Study, redundant_counts


def suggest_cause(spec: FieldSpec, human: str, council: str) -> str | None:
    """The cause the labels themselves imply, if any (an adjudicator confirms or overrides)."""
    if spec.schema_mapping and spec.mapped(human) == spec.mapped(council):
        return "schema_gap"
    first, second = spec.rank(human), spec.rank(council)
    if first is not None and second is not None and abs(first - second) == 1:
        return "severity_shift"
    return None


def propose(
    rule: Rule, spec: FieldSpec, human: str, council: str, redundant: int | None
) -> Proposal:
    """Apply a field's reconciliation rule to one disagreement (``rule.propose``)."""
    return rule.propose(spec, human, council, redundant)


def comparisons(study: Study) -> pl.DataFrame:
    """Human vs council per item and field, with the suggested cause and the rule's proposal.

    Each side is its kind's label (the majority where several raters of a kind labelled an
    item). Columns: item_id, field, human, council, agree, suggested_cause, redundant_calls,
    redundant_source, proposal_side, proposal_value, proposal_reason.
    """
    frames = []
    for name in study.labels.fields:
        wide = rater_columns(study.labels, name, by="kind")
        if not {"human", "council"} <= set(wide.columns):
            continue
        frames.append(
            wide.select("item_id", "human", "council").drop_nulls().with_columns(field=pl.lit(name))
        )
    schema = {"item_id": pl.String, "field": pl.String, "human": pl.String, "council": pl.String}
    both = pl.concat(frames).select(*schema) if frames else pl.DataFrame(schema=schema)
    both = both.join(redundant_counts(study), on="item_id", how="left")
    rows = []
    for row in both.iter_rows(named=True):
        spec = study.labels.spec(row["field"])
        agree = row["human"] == row["council"]
        cause = None if agree else suggest_cause(spec, row["human"], row["council"])
        proposal = (
            Proposal(side=None, value=None, reason="")
            if agree
            else study.config.rule(row["field"]).propose(
                spec, row["human"], row["council"], row["redundant_calls"]
            )
        )
        rows.append(
            {
                **row,
                "agree": agree,
                "suggested_cause": cause,
                "proposal_side": proposal.side,
                "proposal_value": proposal.value,
                "proposal_reason": proposal.reason or None,
            }
        )
    return pl.DataFrame(rows, schema=_COMPARISON_SCHEMA).sort("item_id", "field")


_COMPARISON_SCHEMA = {
    "item_id": pl.String,
    "field": pl.String,
    "human": pl.String,
    "council": pl.String,
    "redundant_calls": pl.Int64,
    "redundant_source": pl.String,
    "agree": pl.Boolean,
    "suggested_cause": pl.String,
    "proposal_side": pl.String,
    "proposal_value": pl.String,
    "proposal_reason": pl.String,
}
_DECISION_SCHEMA = {
    "item_id": pl.String,
    "field": pl.String,
    "adjudicator": pl.String,
    "adjudicator_kind": pl.String,
    "side": pl.String,
    "value": pl.String,
    "cause": pl.String,
    "note": pl.String,
    "decided_at": pl.String,
}


def current_decisions(decisions: Iterable[Decision]) -> pl.DataFrame:
    """The latest decision for each (item, field), in the order given (later wins)."""
    latest: dict[tuple[str, str], Decision] = {}
    for decision in decisions:
        latest[decision.item_id, decision.field] = decision
    rows = [d.model_dump(mode="json") for d in latest.values()]
    return pl.DataFrame(rows, schema=_DECISION_SCHEMA)


def reconcile(comparison: pl.DataFrame, decisions: Iterable[Decision]) -> pl.DataFrame:
    """The calibrated label of every (item, field).

    Agreement keeps the shared label; a disagreement takes its adjudicator's decision, else
    the rule's proposal (``source`` = ``rule``), else stays open (``calibrated`` null).
    ``followed_rule`` says whether a decision chose the side the rule proposed (null where the
    rule made no proposal). ``cause`` is the decision's cause, else the one suggested from
    the labels, and ``cause_from`` says which (``decision``, ``labels``; null: none).
    """
    decided = current_decisions(decisions)
    joined = comparison.join(decided, on=["item_id", "field"], how="left")
    source = (
        pl.when(pl.col("agree"))
        .then(pl.lit("agreement"))
        .when(pl.col("adjudicator_kind").is_not_null())
        .then(pl.col("adjudicator_kind"))
        .when(pl.col("proposal_side").is_not_null())
        .then(pl.lit("rule"))
        .otherwise(pl.lit("open"))
    )
    calibrated = (
        pl.when(pl.col("agree"))
        .then(pl.col("human"))
        .when(pl.col("value").is_not_null())
        .then(pl.col("value"))
        .otherwise(pl.col("proposal_value"))
    )
    followed = (
        pl.when(pl.col("side").is_null() | pl.col("proposal_side").is_null())
        .then(None)
        .otherwise(pl.col("side") == pl.col("proposal_side"))
    )
    return joined.with_columns(
        source=source,
        calibrated=calibrated,
        followed_rule=followed,
        cause_from=pl.when(pl.col("cause").is_not_null())
        .then(pl.lit("decision"))
        .when(pl.col("suggested_cause").is_not_null())
        .then(pl.lit("labels")),
        cause=pl.col("cause").fill_null(pl.col("suggested_cause")),
    )


def all_decisions(study: Study, store: LabelStore | None) -> list[Decision]:
    """Recorded decisions, then the store's (a decision saved later overrides)."""
    return [*study.recorded, *(store.decisions() if store else [])]


def still_open(reconciled: pl.DataFrame) -> pl.DataFrame:
    """The disagreements of a reconciled table that no one has decided (a rule's proposal
    alone does not settle one), in item order: the Adjudicate page's queue and the AI
    adjudicator's work list."""
    return reconciled.filter(~pl.col("agree") & pl.col("adjudicator_kind").is_null()).sort(
        "item_id", "field"
    )


def open_disagreements(study: Study, store: LabelStore | None) -> pl.DataFrame:
    """Disagreements with no decision yet (recorded or in the store), in item order."""
    return still_open(reconcile(comparisons(study), all_decisions(study, store)))


def decision_history(
    study: Study, store: LabelStore | None, item_id: str, field: str
) -> pl.DataFrame:
    """Every decision on one disagreement, oldest first: who, when, which side and value, the
    cause and note, where it was kept (shipped with the labels or saved in the store) and the
    decision it overrode."""
    kept = [("labels", d) for d in study.recorded] + [
        ("store", d) for d in (store.decisions() if store else [])
    ]
    rows: list[dict[str, object]] = []
    for origin, decision in kept:
        if (decision.item_id, decision.field) != (item_id, field):
            continue
        previous = rows[-1] if rows else None
        rows.append(
            {
                "decided_at": decision.decided_at.isoformat(timespec="seconds"),
                "adjudicator": decision.adjudicator,
                "kind": decision.adjudicator_kind,
                "side": decision.side,
                "value": decision.value,
                "cause": decision.cause,
                "note": decision.note,
                "kept_in": origin,
                "overrode": None
                if previous is None
                else f"{previous['adjudicator']}: {previous['side']} ({previous['value']})",
            }
        )
    return pl.DataFrame(rows, schema=_HISTORY_SCHEMA)


_HISTORY_SCHEMA = {
    "decided_at": pl.String,
    "adjudicator": pl.String,
    "kind": pl.String,
    "side": pl.String,
    "value": pl.String,
    "cause": pl.String,
    "note": pl.String,
    "kept_in": pl.String,
    "overrode": pl.String,
}
