"""`tsq agreement` and `tsq adjudicate`: council vs human, and the decisions."""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import TYPE_CHECKING

import click

from analysis._format import no_interval
from analysis.cli._common import (
    EXIT_NOTHING_LOADED,
    _existing_store,
    _interval,
    _judgments_or_exit,
    _store_for,
    _study_or_exit,
    concurrency_option,
    config_option,
    db_option,
    timeout_option,
)

if TYPE_CHECKING:
    from analysis.study import AgreementReport, StudyTables


def _print_agreement(report: AgreementReport, kinds: dict[str, str]) -> None:
    """Each field's pairs; on tool_selection, those of the judge against people
    (:func:`analysis.study.judge_vs_people`) with what kappa hides."""
    from analysis.study import TRAINED_SCORER_NOTE, judge_vs_people, pair_details, per_class_lines

    for name, field in report.fields.items():
        judged = judge_vs_people(field.pairs, kinds) if name == "tool_selection" else []
        weighting = "linear-weighted kappa" if field.kind == "ordinal" else "kappa"
        click.echo(f"{name} ({field.kind}, {weighting})")
        if not field.pairs:
            click.echo("  no two raters labelled the same items")
            if name == "tool_selection":
                click.echo(
                    "  (people's step labels come from the store: --db, or the default store "
                    "of these labels; label steps on the Turn page)"
                )
        for pair in field.pairs:
            agreement = "n/a" if pair.agreement is None else f"{pair.agreement:.1%}"
            kappa = "n/a" if pair.kappa is None else f"{pair.kappa:.3f}"
            click.echo(
                f"  {pair.rater_a} vs {pair.rater_b}: n={pair.n} agreement {agreement}"
                f"{_interval(pair.agreement_ci, percent=True) or no_interval(pair.sessions)} "
                f"kappa {kappa}{_interval(pair.kappa_ci) or no_interval(pair.sessions)}"
            )
            if pair in judged:  # the TSQ judge vs people: what kappa hides
                if kinds.get(pair.rater_b) == "scorer":
                    click.echo(f"    {pair.rater_b} is {TRAINED_SCORER_NOTE}.")
                for line in pair_details(pair):
                    click.echo(f"    {line}")
            elif pair.reference is not None:
                for line in per_class_lines(pair):
                    click.echo(f"    {line}")
        if field.council and field.council.krippendorff_alpha is not None:
            click.echo(
                f"  stage-1 judges: Krippendorff's alpha {field.council.krippendorff_alpha:.3f}"
            )


def _print_tables(tables: StudyTables) -> None:
    import polars as pl

    from analysis.study import TABLES

    counts = tables.sessions
    click.echo(
        f"{counts.sessions} sessions, {counts.with_disagreement} with a disagreement: "
        f"{counts.human_adjudicated} human-adjudicated, {counts.ai_adjudicated} AI-adjudicated, "
        f"{counts.open} still open"
    )
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        for name in TABLES:
            click.echo(f"\n{name}")
            click.echo(getattr(tables, name))


@click.command()
@click.argument("labels", type=click.Path(), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@click.option("--tables", is_flag=True, help="The five council-vs-human tables instead.")
@click.option(
    "--by",
    type=click.Choice(["rater", "kind"]),
    default="rater",
    show_default=True,
    help="Compare raters, or rater kinds (a kind's majority label per item).",
)
@config_option
@db_option
@click.option(
    "--judgments",
    type=click.Path(dir_okay=False),
    help="JSONL from tsq judge: the judge's tool_selection labels, compared with people's "
    "step labels in the store (--db).",
)
@click.option(
    "--resamples",
    type=click.IntRange(0, 100_000),
    default=1000,
    show_default=True,
    help="Bootstrap resamples for the 95% intervals (0: none).",
)
@click.option(
    "--reference",
    default="human",
    show_default=True,
    help="The rater (a name, or a rater kind) the others are scored against: precision, "
    "recall, F1, specificity and balanced accuracy per pair.",
)
def agreement(
    labels: str | None,
    as_json: bool,
    tables: bool,
    by: str,
    config: str | None,
    db: str | None,
    judgments: str | None,
    resamples: int,
    reference: str,
) -> None:
    """Agreement between raters per field; with --tables, the reconciled study's five tables;
    with --judgments, the TSQ judge against people's step labels on tool_selection."""
    from analysis.study import agreement_report, study_tables, tool_selection_labels

    if labels is None and (tables or not (judgments and db)):
        click.echo("Give LABELS (or, without --tables, --judgments and --db).", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    study = _study_or_exit(labels, config) if labels is not None else None
    label_set = study.labels if study is not None else None
    if judgments is not None and not tables:
        store = _store_for(labels or "", db) if db else _existing_store(labels or "", db)
        label_set = tool_selection_labels(_judgments_or_exit(judgments), store, label_set)
        if label_set.frame.is_empty():
            click.echo(f"{judgments}: no scored judgment of the full condition.", err=True)
            sys.exit(EXIT_NOTHING_LOADED)
    if tables and labels is not None and study is not None:
        store = _existing_store(labels, db)
        result = study_tables(study, store, resamples)
        if result.reconciled.is_empty():
            click.echo(
                f"{labels}: no item has both a human and a council label (rater_kind human "
                "and council), which the study tables compare.",
                err=True,
            )
            sys.exit(EXIT_NOTHING_LOADED)
        if as_json:
            click.echo(json.dumps(result.to_json_dict()))
        else:
            _print_tables(result)
        return
    assert label_set is not None  # LABELS or --judgments gave labels
    report = agreement_report(
        label_set, by="kind" if by == "kind" else "rater", resamples=resamples, reference=reference
    )
    if as_json:
        click.echo(report.model_dump_json())
    else:
        _print_agreement(report, dict(label_set.raters().select("rater", "rater_kind").iter_rows()))


@click.command()
@click.argument("labels", type=click.Path())
@click.option(
    "--model",
    required=True,
    help="Adjudicator model: provider:model; a bare id or display name is Anthropic's.",
)
@click.option(
    "--base-url",
    help="Another endpoint of the model's API (Anthropic-compatible for a bare or anthropic: "
    "model; OpenAI-compatible for openai:, e.g. vLLM, Ollama).",
)
@concurrency_option
@click.option("--limit", type=click.IntRange(1), help="Adjudicate at most this many.")
@timeout_option
@config_option
@db_option
def adjudicate(
    labels: str,
    model: str,
    base_url: str | None,
    concurrency: int,
    limit: int | None,
    timeout: float,
    config: str | None,
    db: str | None,
) -> None:
    """Let the AI adjudicator apply the rules to every disagreement no one has decided."""
    import asyncio

    from tqdm import tqdm

    from analysis.llm import LLMConfig, LLMError
    from analysis.study import adjudicate_open  # the SDK is slow to import

    study = _study_or_exit(labels, config)
    store = _store_for(labels, db)
    settings = LLMConfig(model=model, base_url=base_url, concurrency=concurrency, timeout=timeout)
    with tqdm(unit="disagreement", disable=None, file=sys.stderr) as bar:
        try:
            run = asyncio.run(
                adjudicate_open(study, store, settings, limit, on_item=lambda: bar.update(1))
            )
        except LLMError as error:
            click.echo(str(error), err=True)
            sys.exit(1)
    for item_id, field, reason in run.failed:
        click.echo(f"{item_id} {field}: left open ({reason}).", err=True)
    sides = Counter(decision.side for decision in run.decided)
    click.echo(
        f"{len(run.decided)} decided by {run.stats.model} (human side {sides['human']}, "
        f"council side {sides['council']}), {len(run.failed)} left open; "
        f"{run.stats.http_requests} HTTP requests. Saved in {store.path}"
    )
    if run.failed:
        sys.exit(1)
