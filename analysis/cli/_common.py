"""What several ``tsq`` commands share: option defaults written out, options, and the ways a
command loads its input or stops with one sentence."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from pydantic import BaseModel

    from analysis.judge import JudgeSpec
    from analysis.models import Judgment, LoadResult, ParseIssue, ToolCatalog
    from analysis.scorer import ScorerCard, TrainedScorer
    from analysis.study import LabelStore, Study

# Every import of the analysis package (and of tqdm, polars, asyncio, sqlite3) is made by the
# command that needs it, so that ``tsq --help`` and ``tsq ingest`` load no statistics,
# charting, API or OTLP library. tests/test_imports.py holds the line.

# Option defaults, written out so that building the commands imports nothing; each equals the
# constant it mirrors (analysis.export._sanitize.DEFAULT_MAX_CHARS and
# analysis.render._judge_input.DEFAULT_STEP_CHARS), which tests/test_imports.py checks.
DEFAULT_MAX_CHARS = 2000
DEFAULT_STEP_CHARS = 12_000

EXIT_NOTHING_LOADED = 2
"""Nothing could be loaded, or an input (a file, a spec, an option) cannot be used."""
EXIT_REFUSED = 2
"""A run refused: its estimate above ``--max-cost`` (or unknown under it), no key for the model,
a model or request it cannot make, or the model's API stopping it before any result. The same
status as nothing loaded."""

Given = TypeVar("Given")
Options = TypeVar("Options", bound="BaseModel")


def _parsed(
    given: Mapping[str, Any], command: Callable[..., Given], options: type[Options]
) -> tuple[Given, Options]:
    """A command's parameters as what only the command takes (``command``) and the run's
    options (``options``, a model declared once for the command and the app, whose fields are
    the options of the same names)."""
    shared = set(options.model_fields)
    return (
        command(**{name: value for name, value in given.items() if name not in shared}),
        options.model_validate({name: value for name, value in given.items() if name in shared}),
    )


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "none"


def _load_or_exit(
    paths: tuple[str, ...], catalog: str | None = None, *, whole_results: bool = False
) -> LoadResult:
    """Load, report every issue on stderr, and exit 2 when nothing could be loaded.

    ``whole_results`` keeps tool results uncut (``tsq send``: secrets are removed before
    anything is cut, so no secret is left half visible to escape its rule)."""
    from analysis.ingest import DEFAULT_MAX_RESULT_CHARS, load

    cut = None if whole_results else DEFAULT_MAX_RESULT_CHARS
    result = load(paths, catalog=catalog, max_result_chars=cut)
    from analysis.ingest import why_nothing_loaded

    why = why_nothing_loaded(paths, result.files_read, 0)
    _issues_or_exit(result.all_issues(), bool(result.sessions), why)
    return result


def _issues_or_exit(issues: list[ParseIssue], loaded: bool, why_nothing: str) -> None:
    """Every issue on stderr, those of one file with one reason as one line; exit 2 when
    nothing could be loaded (``why_nothing`` said only when no issue says why)."""
    from analysis.ingest import grouped_issues

    for group in grouped_issues(issues):
        click.echo(str(group), err=True)
    if not loaded:
        if not issues:
            click.echo(why_nothing, err=True)
        sys.exit(EXIT_NOTHING_LOADED)


def _live_dump_or_exit(path: str | None) -> ToolCatalog | None:
    if path is None:
        return None
    from analysis.catalog import load_live_dump

    live, issues = load_live_dump(path)
    for issue in issues:
        click.echo(str(issue), err=True)
    if live is None:
        click.echo(f"{path}: the live catalog dump could not be read.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    return live


def _can_ask() -> bool:
    """Whether someone can answer a question: standard input is open and a terminal."""
    try:
        return sys.stdin is not None and not sys.stdin.closed and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


REQUEST_TIMEOUT = 60.0
"""Seconds a model request may take (``analysis.llm.DEFAULT_TIMEOUT``, written out so that
``--help`` does not import the model layer)."""
timeout_option = click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=REQUEST_TIMEOUT,
    show_default=True,
    help="Seconds each model request may take before it is retried, then given up.",
)
max_cost_option = click.option(
    "--max-cost",
    type=click.FloatRange(min=0),
    help="Refuse to start when the estimated cost (USD) is above this.",
)
dry_run_option = click.option(
    "--dry-run", is_flag=True, help="Print what would be judged and its cost; no request."
)
vote_cache_option = click.option(
    "--cache-dir", type=click.Path(file_okay=False), help="Vote cache folder."
)
concurrency_option = click.option(
    "--concurrency", type=click.IntRange(1, 64), default=4, show_default=True
)
live_dump_option = click.option(
    "--live-catalog",
    type=click.Path(dir_okay=False),
    help="Catalog the agent dumped at send time, merged on top of the built-in menu.",
)


current_option = click.option(
    "--current",
    is_flag=True,
    help="The current Claude Code session of this folder (the registry's, else the newest "
    "transcript), instead of PATHS.",
)


def _require_out(out: str | None, dry_run: bool) -> None:
    """A run that asks a model keeps what it got: ``--out`` is required unless it is a dry run."""
    if out is None and not dry_run:
        raise click.UsageError("--out is required (unless --dry-run).")


def _paths_or_current(paths: tuple[str, ...], current: bool) -> tuple[str, ...]:
    if current == bool(paths):
        raise click.UsageError("give PATHS or --current.")
    return (str(_current_transcript()),) if current else paths


def _current_transcript() -> Path:
    """The current Claude Code session's transcript for this folder, said on stderr."""
    from analysis.claude import NoCurrentSession, current_session, registry_path

    try:
        transcript, said = current_session(Path.cwd(), Path.home(), registry_path())
    except NoCurrentSession as error:
        click.echo(f"{error}.", err=True)
        sys.exit(2)
    click.echo(f"Picked {said}.", err=True)
    return transcript


judge_option = click.option(
    "--judge",
    "judge_spec",
    type=click.Path(dir_okay=False),
    help="A judge spec (TOML); default: the built-in tsq-rubric/3 (see tsq judge --help).",
)


def _spec_or_exit(path: str | None, **overrides: object) -> JudgeSpec:
    """The spec of --judge (else the built-in one) with the options given over it; a spec
    that cannot be used is one sentence and exit 2."""
    from analysis.judge import JudgeSpecError, default_spec, read_spec

    given = {name: value for name, value in overrides.items() if value is not None}
    if path is None and "model" not in given:
        raise click.UsageError("give --model, or a judge spec with --judge.")
    try:
        spec = read_spec(path) if path else default_spec()
        return spec.with_changes(**given) if given else spec
    except JudgeSpecError as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    except ValueError as error:  # an option over the spec that the spec refuses
        click.echo(f"{path}: {error}", err=True)
        sys.exit(EXIT_NOTHING_LOADED)


def _judgments_or_exit(path: str | None) -> list[Judgment]:
    """Judgments from ``--judgments``; a file that cannot be used is one sentence and exit 2."""
    if path is None:
        return []
    from analysis.judge import load_judgments

    try:
        return load_judgments(path)
    except OSError as error:
        click.echo(f"{path}: cannot be read ({error.strerror}).", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    except ValueError as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)


config_option = click.option(
    "--config", type=click.Path(dir_okay=False), help="Fields and rules (TOML or JSON)."
)
db_option = click.option(
    "--db",
    type=click.Path(dir_okay=False),
    help="Adjudication store (SQLite). Default: one per study in the user's data folder.",
)


def _study_or_exit(labels: str, config: str | None) -> Study:
    from analysis.study import LabelError, load_study, read_config

    try:
        study = load_study(labels, read_config(config) if config else None)
    except LabelError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    for issue in study.issues:
        click.echo(str(issue), err=True)
    if study.labels.frame.is_empty():
        click.echo(f"{labels}: no valid labels.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    return study


def _interval(bounds: tuple[float, float] | None, percent: bool = False) -> str:
    if bounds is None:
        return ""
    low, high = (100 * b for b in bounds) if percent else bounds
    return f" [{low:.1f}, {high:.1f}]" if percent else f" [{low:.3f}, {high:.3f}]"


def _store_for(labels: str, db: str | None) -> LabelStore:
    import sqlite3

    from analysis.study import LabelStore, LabelStoreError, default_store_path

    path = Path(db) if db else default_store_path(labels)
    try:
        return LabelStore(path)
    except LabelStoreError as error:  # a sentence naming the file already
        click.echo(str(error), err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    except (OSError, sqlite3.Error) as error:
        click.echo(f"{path}: cannot open the adjudication store ({error}).", err=True)
        sys.exit(1)


def _existing_store(labels: str, db: str | None) -> LabelStore | None:
    """The store named by --db, else the study's default one if it was ever created."""
    from analysis.study import default_store_path

    if db is None and not default_store_path(labels).exists():
        return None
    return _store_for(labels, db)


def scorer_or_exit(folder: str) -> tuple[TrainedScorer, ScorerCard]:
    """``--scorer DIR`` loaded; a folder that is not a usable scorer is one sentence, exit 2."""
    from analysis.scorer import FEATURE_SET_VERSION, ScorerProblem, load_scorer

    try:
        return load_scorer(Path(folder), FEATURE_SET_VERSION)
    except ScorerProblem as error:
        click.echo(f"{str(error).rstrip('.')}.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
