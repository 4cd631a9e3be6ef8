"""``tsq watch``: did tool choice get measurably worse in the newest agent version, model,
week or agent? For cron and CI: exit status 1 on a drop.

Registered on the ``tsq`` group by ``analysis.cli``; imports the analysis package only inside
the command, like the others.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from analysis.cli._index import (
    EXIT_UNUSABLE,
    collection_or_exit,
    index_path_option,
    judge_id_option,
)

if TYPE_CHECKING:
    import polars as pl

    from analysis.index import Collection

EXIT_DROP = 1


def _refuse(sentence: str) -> NoReturn:
    """One sentence on stderr, exit 2."""
    sentence = sentence.rstrip(".")
    click.echo(f"{sentence[:1].upper()}{sentence[1:]}.", err=True)
    sys.exit(EXIT_UNUSABLE)


def _scored(collection: Collection, scorer_dir: str) -> tuple[str, list[str] | None]:
    """The steps of the collection the scorer in ``scorer_dir`` has not scored yet scored
    (``tsq score``); its ``scorer_id`` and the tools it was trained on (None where its card
    does not list them)."""
    from analysis._format import counted
    from analysis.cli._common import scorer_or_exit
    from analysis.index import IndexProblem, score_collection

    scorer, card = scorer_or_exit(scorer_dir)
    if not card.trained_tools:
        click.echo(
            f"The card of {card.scorer_id} does not list the tools it was trained on (saved "
            "before cards did): train it again for the share of tools it never saw.",
            err=True,
        )
    try:
        run = score_collection(collection, scorer, card, folder=Path(scorer_dir))
    except IndexProblem as error:
        _refuse(str(error))
    except OSError as error:
        _refuse(f"the index cannot be written ({error.strerror or error})")
    click.echo(
        f"Scored {counted(run.scored, 'step')} with {run.scorer_id} "
        f"({run.already:,} scored before).",
        err=True,
    )
    return card.scorer_id, card.trained_tools or None


def _judged_steps(
    collection: Collection, judge_id: str | None, paths: tuple[str, ...]
) -> pl.DataFrame:
    """The collection's steps with their scores by ``judge_id`` (each session's own judge
    where None); none judged is one sentence, exit 2."""
    from analysis.index import IndexProblem

    try:
        steps = collection.step_scores(judge_id)
    except IndexProblem as error:
        _refuse(str(error))
    if not steps["judged"].any():
        whose = f" by {judge_id}" if judge_id is not None else ""
        _refuse(f"no step under {', '.join(paths)} was judged{whose}: run tsq judge or tsq score")
    return steps


@click.command(name="watch")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--by",
    type=click.Choice(["version", "model", "week", "agent"]),
    required=True,
    help="What the groups are: the newest is watched.",
)
@click.option(
    "--baseline",
    help="The group of --by the newest is compared with (default: the one just before it).",
)
@judge_id_option
@click.option(
    "--scorer",
    "scorer_dir",
    type=click.Path(file_okay=False),
    help="A trained step scorer's folder (tsq scorer train --out): it is the judge, and scores "
    "the steps it has not scored yet first.",
)
@click.option(
    "--min-drop",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="The smallest drop in TSQ that counts (0: any measurable drop).",
)
@index_path_option
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def watch_command(
    paths: tuple[str, ...],
    by: str,
    baseline: str | None,
    judge_id: str | None,
    scorer_dir: str | None,
    min_drop: float,
    index_path: str | None,
    as_json: bool,
) -> None:
    """Compare the newest group of --by (agent version, model, week or agent) among the judged
    steps under PATHS with the baseline: a drop is a TSQ below the baseline's whose 95%
    interval of the difference (newest - baseline, resampling sessions) lies wholly below 0,
    by at least --min-drop. Reads through the index (brought up to date first), as tsq trends.

    Exit status: 0 no measurable drop; 1 a drop; 2 no judged step, fewer than two groups, an
    unknown --baseline, --judge-id with --scorer, or a scorer or index that cannot be used.
    """
    from analysis.index import WatchProblem, trained_tools_of, watch

    if judge_id is not None and scorer_dir is not None:
        _refuse("give --judge-id or --scorer, not both: a watch counts one judge")
    collection = collection_or_exit(paths, index_path, with_judgments=False)
    if scorer_dir is not None:
        judge_id, trained_tools = _scored(collection, scorer_dir)
    steps = _judged_steps(collection, judge_id, paths)
    if scorer_dir is None:  # a scorer's judgments read from the index: its card, if still there
        trained_tools = trained_tools_of(steps["judge"][0], collection.scorers)
    try:
        verdict = watch(
            steps,
            by,  # type: ignore[arg-type]  # click has checked it
            baseline,
            min_drop,
            starts=collection.session_starts,
            trained_tools=trained_tools,
        )
    except WatchProblem as error:
        _refuse(str(error))
    if as_json:
        click.echo(json.dumps(verdict.model_dump()))
    else:
        click.echo(verdict.sentence)
    if verdict.drop:
        sys.exit(EXIT_DROP)
