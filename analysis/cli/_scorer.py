"""``tsq scorer train`` and ``tsq score``: a step scorer trained on people's labels (and a
judge's votes), measured on the test part, and every step of a collection scored with it.

Registered on the ``tsq`` group by ``analysis.cli``; imports the analysis package only inside
the commands.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from analysis._format import interval, number, share
from analysis.cli._align import labels_option, load_label_set, print_score, split_options
from analysis.cli._common import EXIT_NOTHING_LOADED, _judgments_or_exit, scorer_or_exit
from analysis.cli._index import collection_or_exit, index_path_option

if TYPE_CHECKING:
    from analysis.models import Judgment
    from analysis.scorer import ScorerCard, ScorerMetrics, TrainingPlan

DEFAULT_SCORER_FOLDER = "tsq-scorer"
DEFAULT_SCORER_NAME = "step-scorer"


@click.group(name="scorer")
def scorer_group() -> None:
    """A small step scorer trained on people's labels: train it, measured against people."""


def print_metrics(metrics: ScorerMetrics) -> None:
    """The scorer on the test part: the figures of any judge, then its probabilities'."""
    click.echo("test:")
    print_score(metrics.spec)
    sessions = metrics.spec.sessions
    click.echo(
        f"  ROC AUC {number(metrics.roc_auc)}{interval(metrics.roc_auc_ci, sessions=sessions)}; "
        f"Brier score {number(metrics.brier)}{interval(metrics.brier_ci, sessions=sessions)}"
    )
    click.echo("  reliability (probability of correct: steps, mean predicted, observed correct)")
    for b in metrics.reliability:
        click.echo(
            f"    {b.low:.1f} to {b.high:.1f}: {b.n:>4}  {b.mean_probability:.3f}  "
            f"{share(b.observed_correct)}"
        )


def print_training(plan: TrainingPlan, card: ScorerCard, folder: Path) -> None:
    counts = card.training_counts
    click.echo(
        f"Trained {card.scorer_id} on {counts['correct'] + counts['incorrect']} labelled dev "
        f"steps ({counts['incorrect']} incorrect, {counts['correct']} correct)"
        + (
            f" and {counts['judge_steps']} verdicts of {card.judge_id} (weight "
            f"{card.settings.distill_weight:g})"
            if counts["judge_steps"]
            else ""
        )
        + f"; saved in {folder}."
    )
    if plan.test_votes_left_out:
        click.echo(f"{plan.test_votes_left_out} verdicts on test-part steps were left out.")
    if plan.missing_steps:
        click.echo(f"{plan.missing_steps} labelled steps are not in the sessions given.")
    if card.test is None:
        click.echo("No labelled test step among the sessions given: the scorer is not measured.")
    else:
        print_metrics(card.test)


@scorer_group.command(name="train")
@click.argument("paths", nargs=-1, required=True)
@labels_option
@click.option(
    "--judgments",
    "judgment_files",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="A judge's judgments (JSONL) to distill; repeatable. Never a test-part step's.",
)
@click.option("--judge-id", help="Whose judgments to distill (default: the only judge given).")
@click.option(
    "--distill-weight",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.5,
    show_default=True,
    help="A judge's verdict's weight in training; a person's label weighs 1.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=DEFAULT_SCORER_FOLDER,
    show_default=True,
    help="The folder the scorer is saved in (its model and model card).",
)
@click.option("--name", default=DEFAULT_SCORER_NAME, show_default=True, help="The scorer's name.")
@split_options
@index_path_option
@click.option("--json", "as_json", is_flag=True, help="Print the model card as one JSON object.")
def train(
    paths: tuple[str, ...],
    labels: str,
    judgment_files: tuple[str, ...],
    judge_id: str | None,
    distill_weight: float,
    out: str,
    name: str,
    test_share: float,
    seed: int,
    index_path: str | None,
    as_json: bool,
) -> None:
    """Train a step scorer on the dev part of the alignment split and measure it on the test part.

    PATHS hold the labelled sessions, read through the index (--index). People's labels are
    the targets; with --judgments, a judge's vote fractions too (soft targets, weighted
    --distill-weight), from dev sessions and sessions outside the split only. Exit status:
    0 trained; 2 nothing to train on, a bad label or judgments file, or judgments of several
    judges and no --judge-id.
    """
    from analysis.align import LeakError, session_of
    from analysis.scorer import (
        ScorerSettings,
        plan_training,
        save_scorer,
        train_scorer,
    )

    label_set = load_label_set(labels, test_share, seed)
    judgments = [j for file in judgment_files for j in _judgments_or_exit(file)]
    collection = collection_or_exit(paths, index_path, with_judgments=False)
    wanted = {session_of(item) for item in label_set.refs} | {j.session_id for j in judgments}
    features = collection.step_features(subagents=True, session_ids=wanted)
    settings = ScorerSettings(distill_weight=distill_weight)
    try:
        plan = plan_training(features, label_set, judgments, judge_id, distill_weight)
        scorer, card = train_scorer(features, label_set, plan, name, settings, seed, test_share)
    except (ValueError, LeakError) as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    folder = Path(out)
    try:
        card = save_scorer(folder, scorer, card)
    except OSError as error:
        click.echo(f"{folder}: cannot save the scorer ({error.strerror or error}).", err=True)
        sys.exit(1)
    if as_json:
        click.echo(json.dumps(card.model_dump(mode="json")))
    else:
        print_training(plan, card, folder)


@click.command(name="score")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--scorer",
    "scorer_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="The scorer's folder (tsq scorer train --out).",
)
@index_path_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="Also write the scorer's judgment of every step of PATHS here (JSONL).",
)
@click.option("--subagents", is_flag=True, help="Score subagents' steps too.")
def score(
    paths: tuple[str, ...],
    scorer_dir: str,
    index_path: str | None,
    out: str | None,
    subagents: bool,
) -> None:
    """Score every step of PATHS with a trained step scorer, through the index.

    Each step a judge would grade (the main agent's; subagents' too with --subagents) gets
    the scorer's probability that its tool choice was correct, written into the index's
    judgments (a step already scored by the same scorer is skipped); with --out, the
    scorer's judgment of every step as JSONL rows of the shape tsq judge --out writes
    ("rater": "scorer"). Exit status: 0 done; 1 --out cannot be written; 2 not a usable
    scorer, or an index that cannot be used.
    """
    from analysis.index import IndexProblem, score_collection

    scorer, card = scorer_or_exit(scorer_dir)
    collection = collection_or_exit(paths, index_path, with_judgments=False)
    written = 0
    try:
        with contextlib.ExitStack() as stack:
            write = None
            if out is not None:
                stream = stack.enter_context(
                    click.open_file(out, "w", encoding="utf-8", atomic=True)
                )

                def write(judgment: Judgment) -> None:
                    nonlocal written
                    stream.write(judgment.model_dump_json() + "\n")
                    written += 1

            run = score_collection(
                collection, scorer, card, subagents=subagents, out=write, folder=Path(scorer_dir)
            )
    except IndexProblem as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    except OSError as error:
        click.echo(f"{out}: cannot be written ({error.strerror or error}).", err=True)
        sys.exit(1)
    click.echo(
        f"Scored {run.scored:,} steps with {run.scorer_id} in {run.seconds:.1f} s "
        f"({run.already:,} scored before, {run.steps:,} in all)"
        + (f"; wrote {written:,} judgments to {out}" if out is not None else "")
        + "."
    )
