"""``tsq``: the scripting face of the workbench."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click

from analysis._align_cli import labels_group
from analysis._claude_cli import claude_group
from analysis._index_cli import (
    collection_or_exit,
    index_command,
    index_path_option,
    no_index_option,
    trends_command,
    update_or_exit,
)

if TYPE_CHECKING:
    from analysis.export._send import SendPreview
    from analysis.index import Collection
    from analysis.ingest._report import IngestReport
    from analysis.judge._cost import RunEstimate, RunStats
    from analysis.judge._plan import Choice, JudgePlan
    from analysis.judge._spec import JudgeSpec
    from analysis.models import Condition, LoadResult, ParseIssue, ToolCatalog, TurnJudgment
    from analysis.study import AdjudicationStore, AgreementReport, Study, StudyTables

# Every import of the analysis package (and of tqdm, polars, asyncio, sqlite3) is made by the
# command that needs it, so that ``tsq --help`` and ``tsq ingest`` load no statistics,
# charting, API or OTLP library. tests/test_imports.py holds the line.

# Option defaults, written out so that building the commands imports nothing; each equals the
# constant it mirrors (analysis.export._sanitize.DEFAULT_MAX_CHARS and
# analysis.render._judge_input.DEFAULT_STEP_CHARS), which tests/test_imports.py checks.
DEFAULT_MAX_CHARS = 2000
DEFAULT_STEP_CHARS = 12_000

EXIT_NOTHING_LOADED = 2


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "none"


def _print_report(report: IngestReport) -> None:
    for session in report.sessions:
        total = sum(session.tool_calls.values())
        click.echo(f"{session.session_id}  [{session.format}]  {session.source}")
        if session.thread_id != session.session_id:
            click.echo(
                f"  thread: {session.thread_id} (this session resumes it, by the session registry)"
            )
        click.echo(f"  turns: {session.turns}")
        click.echo(f"  tool calls: {total} ({_counts(session.tool_calls)})")
        sub_total = sum(session.subagent_tool_calls.values())
        click.echo(f"  subagent tool calls: {sub_total} ({_counts(session.subagent_tool_calls)})")
        click.echo(f"  parse issues: {len(session.issues)}")
        for issue in session.issues:
            click.echo(f"    {issue}")
    for issue in report.totals.file_issues:
        click.echo(f"{issue}", err=True)
    totals = report.totals
    click.echo(
        f"{totals.sessions} sessions, {totals.turns} turns, "
        f"{sum(totals.tool_calls.values())} tool calls, "
        f"{sum(totals.subagent_tool_calls.values())} subagent tool calls, "
        f"{totals.issues} issues, from {totals.files} files"
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tsq-workbench")
def cli() -> None:
    """TSQ Workbench: judge a coding agent's tool choices."""


@cli.command()
@click.argument("paths", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@click.option(
    "--formats",
    "list_formats",
    is_flag=True,
    help="List the formats it reads, in the order they are tried, instead of reading PATHS.",
)
@click.option(
    "--catalog",
    type=click.Path(dir_okay=False),
    help="Tool catalog for OpenAI-format trajectories (default: the one beside them); the "
    "files are then read directly.",
)
@index_path_option
@no_index_option
def ingest(
    paths: tuple[str, ...],
    as_json: bool,
    list_formats: bool,
    catalog: str | None,
    index_path: str | None,
    no_index: bool,
) -> None:
    """Load transcripts (files or folders) and print what was found per session. Reads
    through the index (brought up to date first), unless --no-index or --catalog.

    Exit status: 0 when at least one session was loaded (with or without issues),
    2 when nothing could be loaded.
    """
    if list_formats:
        _print_formats(as_json)
        return
    if not paths:
        raise click.UsageError("give PATHS (or --formats).")
    if no_index or catalog is not None:
        from analysis.ingest._loader import load
        from analysis.ingest._report import ingest_report

        report = ingest_report(load(paths, catalog=catalog))
    else:
        report = _indexed_report(paths, index_path)
    if as_json:
        click.echo(report.model_dump_json())
    else:
        _print_report(report)
    if not report.sessions:
        if not as_json:
            click.echo("Nothing could be loaded from the given paths.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)


def _print_formats(as_json: bool) -> None:
    from analysis.ingest import formats

    listed = formats()
    if as_json:
        click.echo(json.dumps({"formats": listed}))
        return
    width = max(len(f["name"]) for f in listed)
    for entry in listed:
        click.echo(f"{entry['name']:<{width}}  {entry['kind']:<8}  {entry['what']}")


def _indexed_report(paths: tuple[str, ...], index_path: str | None) -> IngestReport:
    from analysis.index import IndexProblem, IndexReader

    click.echo(update_or_exit(paths, index_path, None), err=True)
    try:
        with IndexReader(index_path) as reader:
            return reader.ingest_report(paths)
    except IndexProblem as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)


def _load_or_exit(
    paths: tuple[str, ...], catalog: str | None = None, *, whole_results: bool = False
) -> LoadResult:
    """Load, report every issue on stderr, and exit 2 when nothing could be loaded.

    ``whole_results`` keeps tool results uncut (``tsq send``: secrets are removed before
    anything is cut, so no secret is left half visible to escape its rule)."""
    from analysis.ingest._context import DEFAULT_MAX_RESULT_CHARS
    from analysis.ingest._loader import load

    cut = None if whole_results else DEFAULT_MAX_RESULT_CHARS
    result = load(paths, catalog=catalog, max_result_chars=cut)
    _issues_or_exit(result.all_issues(), bool(result.sessions))
    return result


def _issues_or_exit(issues: list[ParseIssue], loaded: bool) -> None:
    """Every issue on stderr; exit 2 when nothing could be loaded."""
    for issue in issues:
        click.echo(str(issue), err=True)
    if not loaded:
        click.echo("Nothing could be loaded from the given paths.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)


def _live_dump_or_exit(path: str | None) -> ToolCatalog | None:
    if path is None:
        return None
    from analysis.catalog._menus import load_live_dump

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


@cli.command()
@click.argument("paths", nargs=-1)
@current_option
@click.option(
    "--out", required=True, type=click.Path(dir_okay=False), help="OTLP/JSON file to write."
)
@live_dump_option
@click.option(
    "--judgments",
    type=click.Path(dir_okay=False),
    help="JSONL from tsq judge: full-condition judgments ride on the spans they judged.",
)
def export(
    paths: tuple[str, ...],
    current: bool,
    out: str,
    live_catalog: str | None,
    judgments: str | None,
) -> None:
    """Write sessions as OTLP/JSON traces (one trace per turn, one chat span per model
    response; OTel GenAI + Pydantic AI)."""
    from analysis.export._otlp import export_counts, export_otlp_json  # OpenTelemetry: on use

    result = _load_or_exit(_paths_or_current(paths, current))
    document = export_otlp_json(
        result.sessions,
        _live_dump_or_exit(live_catalog),
        judgments=_judgments_or_exit(judgments),
    )
    try:
        Path(out).write_text(json.dumps(document, ensure_ascii=False))
    except OSError as error:
        click.echo(f"{out}: cannot be written ({error.strerror}).", err=True)
        sys.exit(1)
    counts = export_counts(document)
    click.echo(
        f"Wrote {len(result.sessions)} sessions, {counts.traces} traces, {counts.spans} spans "
        f"({counts.steps} steps, {counts.evaluations} evaluations) to {out}"
    )


def _headers(pairs: tuple[str, ...]) -> dict[str, str]:
    headers = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--header")
        headers[key.strip()] = value
    return headers


def _print_preview(preview: SendPreview, endpoint: str) -> None:
    click.echo(f"About to send to {endpoint}:")
    click.echo(
        f"  {preview.sessions} sessions, {preview.turns} turns (traces), {preview.spans} spans, "
        f"{preview.bytes:,} bytes"
    )
    redacted = ", ".join(f"{kind} {n}" for kind, n in preview.redactions.items()) or "nothing"
    click.echo(f"  redacted: {redacted}")


@cli.command(name="send")
@click.argument("paths", nargs=-1)
@click.option("--endpoint", required=True, help="Full OTLP/HTTP traces URL, e.g. …/v1/traces.")
@click.option(
    "--header", "header_pairs", multiple=True, help="Request header KEY=VALUE; repeatable."
)
@click.option("--yes", is_flag=True, help="Send without asking (for scripts).")
@current_option
@click.option(
    "--preview", "preview_only", is_flag=True, help="Show what would leave, and send nothing."
)
@click.option(
    "--max-chars",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_CHARS,
    show_default=True,
    help="Tool arguments and results are cut to this many characters.",
)
@click.option(
    "--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True, help="Seconds."
)
@live_dump_option
@click.option(
    "--judgments",
    type=click.Path(dir_okay=False),
    help="JSONL from tsq judge: full-condition judgments ride on the spans they judged.",
)
def send_command(
    paths: tuple[str, ...],
    endpoint: str,
    header_pairs: tuple[str, ...],
    yes: bool,
    current: bool,
    preview_only: bool,
    max_chars: int,
    timeout: float,
    live_catalog: str | None,
    judgments: str | None,
) -> None:
    """Sanitize sessions and send them as OTLP traces, after showing what will leave."""
    from analysis.export._send import prepare, send  # httpx, OpenTelemetry, detect-secrets

    headers = _headers(header_pairs)
    paths = _paths_or_current(paths, current)
    result = _load_or_exit(paths, whole_results=True)
    prepared, preview = prepare(
        result.sessions, _live_dump_or_exit(live_catalog), max_chars, _judgments_or_exit(judgments)
    )
    _print_preview(preview, endpoint)
    click.echo(f"  {preview.steps} steps (chat spans), {preview.evaluations} evaluations")
    if preview_only:
        click.echo("Not sent (a preview).")
        return
    if not yes:
        if not _can_ask():
            click.echo("Not sent: pass --yes to send without a terminal to confirm on.", err=True)
            sys.exit(1)
        try:
            confirmed = click.confirm("Send?", default=False)
        except click.Abort:  # end of input or Ctrl-C at the prompt
            confirmed = False
        if not confirmed:
            click.echo("Not sent.")
            return
    outcome = send(prepared, endpoint, headers, timeout)
    for message in outcome.messages:
        click.echo(message, err=True)
    accepted = (
        f"{outcome.sessions_accepted} of {len(prepared)} sessions "
        f"({outcome.traces_accepted} traces) accepted"
    )
    if outcome.error is not None:
        click.echo(f"Send failed: {outcome.error}; {accepted}.", err=True)
        sys.exit(1)
    click.echo(f"Sent: {accepted}.")


def _judge_summary(judgments: list[TurnJudgment], stats: RunStats) -> None:
    from analysis.render._judge_input import CONDITIONS
    from analysis.views import turn_scores

    for condition in CONDITIONS:
        rows = [j for j in judgments if j.condition == condition]
        if not rows:
            continue
        scores = turn_scores(rows)
        turn_tsq = scores["score"].drop_nulls().to_list()
        mean = f"{sum(turn_tsq) / len(turn_tsq):.2f}" if turn_tsq else "n/a"
        split = sum(j.verdict == "split" for j in rows)
        unscored = sum(j.verdict == "unscored" for j in rows)
        unit = "steps" if rows[0].unit == "step" else "turns"
        click.echo(
            f"{condition}: {len(rows)} {unit} in {len(scores)} turns, mean turn TSQ {mean}, "
            f"{split} split votes, {unscored} unscored"
        )
    cost = f"${stats.cost_usd:.4f}" if stats.cost_usd is not None else "unknown cost"
    click.echo(
        f"{stats.votes_asked} votes asked, {stats.cache_hits} from the vote cache, "
        f"{stats.http_requests} HTTP requests; tokens: {stats.input_tokens} input, "
        f"{stats.cache_write_tokens} cache writes, {stats.cache_read_tokens} cache reads, "
        f"{stats.output_tokens} output ({cost})"
    )


def _print_estimate(estimate: RunEstimate, unit: str, votes: int, conditions: int) -> None:
    from analysis.judge._cost import dollars

    click.echo(
        f"{estimate.headline(unit, votes, conditions)} (from {estimate.sessions} "
        f"session{'' if estimate.sessions == 1 else 's'}, {estimate.tool_calls} tool calls)"
    )
    click.echo(
        f"estimated tokens: {estimate.input_tokens:,} input "
        f"({estimate.cached_prefix_tokens:,} in cacheable prefixes), "
        f"{estimate.output_tokens:,} output"
    )
    batch = (
        f", {dollars(estimate.cost_batch_usd)} with --batch"
        if estimate.cost_batch_usd is not None
        else " (no --batch for this provider)"
    )
    click.echo(
        f"estimated cost: {dollars(estimate.cost_usd)} without prompt caching, "
        f"{dollars(estimate.cost_cached_usd)} with it{batch}"
    )


judge_option = click.option(
    "--judge",
    "judge_spec",
    type=click.Path(dir_okay=False),
    help="A judge spec (TOML); default: the built-in tsq-rubric/3 (see tsq judge --help).",
)


@cli.command()
@click.argument("paths", nargs=-1)
@current_option
@judge_option
@click.option(
    "--model",
    help="Judge model: provider:model (openai:gpt-4o); a bare id or display name is Anthropic's. "
    "Required without --judge; with it, replaces the spec's model.",
)
@click.option(
    "--votes", type=click.IntRange(1, 10), help="Votes per unit (default: the spec's, 3)."
)
@click.option(
    "--unit",
    type=click.Choice(["step", "turn"]),
    default="step",
    show_default=True,
    help="Judge each model response that called tools (step), or each whole turn.",
)
@click.option(
    "--steps",
    "selection",
    default="all",
    show_default=True,
    help="all, first (the first step after each ask) or sample:N (N steps per session).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="For --steps sample:N.")
@click.option("--text-steps", is_flag=True, help="Also judge responses that called no tool.")
@click.option("--subagents", is_flag=True, help="Also judge the subagents' steps.")
@click.option(
    "--step-chars",
    type=click.IntRange(min=2000),
    help=f"Size budget of a step's input, menu excluded (default: the spec's, "
    f"{DEFAULT_STEP_CHARS}).",
)
@click.option(
    "--base-url",
    help="Another endpoint of the model's API (Anthropic-compatible for a bare or anthropic: "
    "model; OpenAI-compatible for openai:, e.g. vLLM, Ollama).",
)
@concurrency_option
@click.option("--batch", is_flag=True, help="Use the Message Batches API (same output).")
@click.option("--ablation", is_flag=True, help="Judge each unit as bare, catalog_no_call and full.")
@dry_run_option
@max_cost_option
@click.option("--out", type=click.Path(dir_okay=False), help="JSONL to write (not for --dry-run).")
@vote_cache_option
@timeout_option
@live_dump_option
@click.option(
    "--sample-to",
    type=click.FloatRange(0, 0.5, min_open=True),
    help="Judge a stratified random sample of the steps just large enough for TSQ within "
    "± this (95%) per stratum of --by; a later run with a smaller one adds steps.",
)
@click.option(
    "--by",
    type=click.Choice(["tool", "model", "version", "project", "week", "agent"]),
    help="The strata of --sample-to (default: the whole collection is one).",
)
@index_path_option
@click.option(
    "--no-index", is_flag=True, help="Choose steps by reading every file, not through the index."
)
def judge(
    paths: tuple[str, ...],
    current: bool,
    judge_spec: str | None,
    model: str | None,
    votes: int | None,
    unit: str,
    selection: str,
    seed: int,
    text_steps: bool,
    subagents: bool,
    step_chars: int | None,
    base_url: str | None,
    concurrency: int,
    batch: bool,
    ablation: bool,
    dry_run: bool,
    max_cost: float | None,
    out: str | None,
    cache_dir: str | None,
    timeout: float,
    live_catalog: str | None,
    sample_to: float | None,
    by: str | None,
    index_path: str | None,
    no_index: bool,
) -> None:
    """Grade every step's (or turn's) tool choice with a ChainPoll judge; one JSON line each.

    The judge is a spec (--judge FILE), or the built-in one with --model. --model, --votes,
    --step-chars and --base-url given with --judge replace the spec's own (and so change its
    judge_id). Steps that another judge already judged (in --out's earlier content, or among
    PATHS) and whose verdict this judge changes are listed. Steps are chosen through the index
    (brought up to date first; --unit turn and --text-steps read the files, as --no-index).
    With --sample-to, the sample's size and cost are printed before anything is asked, and
    sampled steps this judge already judged are not asked again.

    Exit status: 0 done; 1 --out cannot be written; 2 nothing to judge, a bad option or spec,
    the estimate above --max-cost, or the judge cannot start (key, model).
    """
    import asyncio

    from tqdm import tqdm

    from analysis.judge._chainpoll import JudgeError, judge_rendered  # the SDK: slow to import
    from analysis.judge._plan import Choice
    from analysis.judge._results import merge_judgments
    from analysis.llm import cost_refusal
    from analysis.render._judge_input import CONDITIONS

    if out is None and not dry_run:
        raise click.UsageError("--out is required (unless --dry-run).")
    paths = _paths_or_current(paths, current)
    _check_choice(selection, sample_to, by, unit == "turn" or text_steps)
    if no_index and index_path is not None:
        raise click.UsageError("give --index or --no-index, not both.")
    spec = _spec_or_exit(
        judge_spec, model=model, votes=votes, step_chars=step_chars, base_url=base_url
    )
    votes, model = spec.votes, spec.model
    choice = Choice(
        unit="turn" if unit == "turn" else "step",
        selection=selection,
        text_steps=text_steps,
        subagents=subagents,
        seed=seed,
        sample_to=sample_to,
        by=by,  # type: ignore[arg-type]  # click has checked it
    )
    in_out = _earlier_judgments(out)
    through_index = not no_index and unit == "step" and not text_steps
    conditions = CONDITIONS if ablation else (spec.condition,)
    live = _live_dump_or_exit(live_catalog)
    if through_index:
        plan = _indexed_plan(paths, index_path, spec, conditions, choice, live, in_out, dry_run)
    else:
        from analysis.judge._plan import direct_plan

        plan = direct_plan(_load_or_exit(paths), paths, spec, conditions, choice, live, in_out)
    estimate = plan.estimate
    if plan.sample is not None:
        _print_sample(plan, spec.judge_id)
    _print_estimate(estimate, unit, votes, len(CONDITIONS) if ablation else 1)
    if dry_run:
        return
    rendered = plan.rendered or []
    if not rendered:
        if plan.sample is not None:
            click.echo("Nothing to ask: this judge has judged every sampled step already.")
            return
        click.echo(f"Nothing to judge: no {unit} with a model response was found.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    expected = estimate.cost_batch_usd if batch else estimate.cost_cached_usd
    if refusal := cost_refusal(expected, max_cost):
        click.echo(refusal, err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    config = spec.judge_config(
        concurrency=concurrency, cache_dir=Path(cache_dir) if cache_dir else None, timeout=timeout
    )
    earlier = [*plan.earlier, *in_out]
    with tqdm(total=len(rendered), unit=unit, disable=None, file=sys.stderr) as bar:
        try:
            judgments, stats = asyncio.run(
                judge_rendered(rendered, config, on_turn=lambda: bar.update(1), batch=batch)
            )
        except JudgeError as error:
            click.echo(str(error), err=True)
            sys.exit(EXIT_NOTHING_LOADED)
    assert out is not None
    written = merge_judgments(in_out, judgments)  # other judges' lines are never lost
    try:
        Path(out).write_text("".join(j.model_dump_json() + "\n" for j in written))
    except OSError as error:
        click.echo(f"{out}: cannot be written ({error.strerror}).", err=True)
        sys.exit(1)
    click.echo(f"judge: {spec.judge_id} ({spec.model}, {spec.votes} votes)")
    _judge_summary(judgments, stats)
    _print_changed(earlier, judgments)
    kept = len(written) - len(judgments)
    click.echo(
        f"Wrote {len(judgments)} judgments to {out}"
        + (f" (and kept {kept} of earlier runs there)" if kept else "")
    )


def _check_choice(
    selection: str, sample_to: float | None, by: str | None, not_tool_steps: bool
) -> None:
    """--steps, --sample-to and --by that cannot go together are a usage error."""
    from analysis.render._steps import parse_step_selection

    try:
        parse_step_selection(selection)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--steps") from None
    if by is not None and sample_to is None:
        raise click.UsageError("--by is for --sample-to.")
    if sample_to is not None and not_tool_steps:
        raise click.UsageError(
            "--sample-to samples steps that called tools: not with --unit turn or --text-steps."
        )


def _indexed_plan(
    paths: tuple[str, ...],
    index_path: str | None,
    spec: JudgeSpec,
    conditions: tuple[Condition, ...],
    choice: Choice,
    live: ToolCatalog | None,
    in_out: list[TurnJudgment],
    dry_run: bool,
) -> JudgePlan:
    """The run's plan through the index, brought up to date for PATHS first."""
    from analysis.index import IndexProblem, IndexReader
    from analysis.judge._plan import indexed_plan

    click.echo(update_or_exit(paths, index_path, None))
    try:
        with IndexReader(index_path) as reader:
            return indexed_plan(
                reader, paths, spec, conditions, choice, live, in_out, render=not dry_run
            )
    except IndexProblem as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)


def _print_sample(plan: JudgePlan, judge_id: str) -> None:
    sample = plan.sample
    assert sample is not None
    asked = len(sample.rows) - plan.already
    click.echo(
        f"{sample.in_words(plan.population)}; {plan.already:,} already judged by {judge_id}, "
        f"{asked:,} to ask"
    )
    for stratum in sample.strata:
        click.echo(
            f"  {stratum.name}: {stratum.taken:,} of {stratum.steps:,} steps "
            f"(needs {stratum.needed:,})"
        )


def _spec_or_exit(path: str | None, **overrides: object) -> JudgeSpec:
    """The spec of --judge (else the built-in one) with the options given over it; a spec
    that cannot be used is one sentence and exit 2."""
    from analysis.judge._spec import JudgeSpecError, default_spec, read_spec

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


def _earlier_judgments(out: str | None) -> list[TurnJudgment]:
    """What --out holds before this run (kept, and compared with this run's verdicts). A file
    that is not judgments is refused before anything is asked, rather than overwritten."""
    if out is None or not Path(out).is_file():
        return []
    from analysis.judge._results import load_judgments

    try:
        return load_judgments(out)
    except (OSError, ValueError) as error:
        reason = f"{out}: {error.strerror}" if isinstance(error, OSError) else str(error)
        click.echo(
            f"{reason}: --out would overwrite it, so nothing was judged; give another --out.",
            err=True,
        )
        sys.exit(EXIT_NOTHING_LOADED)


def _print_changed(earlier: list[TurnJudgment], judgments: list[TurnJudgment]) -> None:
    """The steps whose majority verdict differs from the earlier judgment of the same step."""
    from analysis.judge._results import changed_verdicts

    if not earlier:
        return
    changes = changed_verdicts(earlier, judgments)
    click.echo(f"verdicts changed from earlier judges of the same steps: {len(changes)}")
    for change in changes:
        click.echo(
            f"  {change.item_id} [{change.condition}]: {change.before} -> {change.after} "
            f"({change.before_judge} -> {change.after_judge})"
        )


def _judgments_or_exit(path: str | None) -> list[TurnJudgment]:
    """Judgments from ``--judgments``; a file that cannot be used is one sentence and exit 2."""
    if path is None:
        return []
    from analysis.judge._results import load_judgments

    try:
        return load_judgments(path)
    except OSError as error:
        click.echo(f"{path}: cannot be read ({error.strerror}).", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    except ValueError as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--judgments", type=click.Path(dir_okay=False), help="JSONL from tsq judge.")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@live_dump_option
@index_path_option
@no_index_option
def lint(
    paths: tuple[str, ...],
    judgments: str | None,
    as_json: bool,
    live_catalog: str | None,
    index_path: str | None,
    no_index: bool,
) -> None:
    """Explain suspicious scores: findings per step, turn and session, with stable codes.
    The judgments are those found among PATHS and those of --judgments (which win), as in
    tsq report and the workbench. Reads through the index (brought up to date first), unless
    --no-index or --live-catalog; only the judged sessions are read again from their files."""
    from analysis.findings._lint import lint as lint_sessions
    from analysis.judge._results import merge_judgments

    loaded = _judgments_or_exit(judgments)
    if no_index or live_catalog is not None:
        result = _load_or_exit(paths)
        judged = merge_judgments(result.judgments, loaded)
        findings = lint_sessions(result.sessions, judged, live=_live_dump_or_exit(live_catalog))
    else:
        collection = collection_or_exit(paths, index_path)
        _issues_or_exit(collection.issues(), bool(collection.session_ids))
        judged = merge_judgments(collection.judgments, loaded)
        findings = collection.findings(frame=collection.findings_with(judged))
    if as_json:
        click.echo(json.dumps({"findings": [f.model_dump() for f in findings]}))
        return
    for finding in findings:
        where = "session" if finding.turn_index is None else f"turn {finding.turn_index}"
        if finding.step_index is not None:
            where += f" step {finding.step_index}"
            if finding.parent_call_id:
                where += f" (subagent of call {finding.parent_call_id})"
        if finding.condition is not None:
            where += f" [{finding.condition}]"
        click.echo(f"{finding.session_id} {where} {finding.severity.upper()} {finding.code}")
        click.echo(f"    {finding.message}")
    counts = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
    click.echo(", ".join(f"{n} {kind}s" for kind, n in counts.items()) + " found")


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


def _print_agreement(report: AgreementReport, kinds: dict[str, str]) -> None:
    """Each field's pairs; on tool_selection, those of the judge against people
    (:func:`analysis.study.judge_vs_people`) with what kappa hides."""
    from analysis.study import judge_vs_people, pair_details, per_class_lines

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
                f"{_interval(pair.agreement_ci, percent=True)} kappa {kappa}"
                f"{_interval(pair.kappa_ci)}"
            )
            if pair in judged:  # the TSQ judge vs people: what kappa hides
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

    from analysis.study._tables import TABLES

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


@cli.command()
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


def _store_for(labels: str, db: str | None) -> AdjudicationStore:
    import sqlite3

    from analysis.study import AdjudicationStore, default_store_path

    path = Path(db) if db else default_store_path(labels)
    try:
        return AdjudicationStore(path)
    except (OSError, sqlite3.Error) as error:
        click.echo(f"{path}: cannot open the adjudication store ({error}).", err=True)
        sys.exit(1)


def _existing_store(labels: str, db: str | None) -> AdjudicationStore | None:
    """The store named by --db, else the study's default one if it was ever created."""
    from analysis.study import default_store_path

    if db is None and not default_store_path(labels).exists():
        return None
    return _store_for(labels, db)


@cli.command()
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

    from analysis.judge._chainpoll import JudgeConfig, JudgeError
    from analysis.study import adjudicate_open  # the SDK is slow to import

    study = _study_or_exit(labels, config)
    store = _store_for(labels, db)
    settings = JudgeConfig(model=model, base_url=base_url, concurrency=concurrency, timeout=timeout)
    with tqdm(unit="disagreement", disable=None, file=sys.stderr) as bar:
        try:
            run = asyncio.run(
                adjudicate_open(study, store, settings, limit, on_item=lambda: bar.update(1))
            )
        except JudgeError as error:
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


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--judgments",
    type=click.Path(dir_okay=False),
    help="JSONL from tsq judge (judgments found among PATHS are read too; these win).",
)
@click.option(
    "--judge",
    "judge_name",
    help="Report this judge's judgments only (a judge_id, or a model for files from before "
    "judge specs).",
)
@click.option(
    "--labels",
    type=click.Path(),
    help="A council-vs-human study (folder or labels file): adds its five tables.",
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False),
    help="With --labels: the adjudication store (default: the study's own, if any).",
)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="HTML file to write.")
@click.option(
    "--show-paths",
    is_flag=True,
    help="Write file names in full (default: home folders as ~ and /home/USER).",
)
@index_path_option
@no_index_option
def report(
    paths: tuple[str, ...],
    judgments: str | None,
    judge_name: str | None,
    labels: str | None,
    db: str | None,
    out: str,
    show_paths: bool,
    index_path: str | None,
    no_index: bool,
) -> None:
    """Write one self-contained HTML report: session TSQ, split votes, findings, charts,
    and with --labels the agreement tables before and after reconciliation. A session judged
    by several judges is reported with its own judge's (the one with most judgments in it),
    unless --judge names one. Reads through the index (brought up to date first), unless
    --no-index: only the judged sessions are read again from their files.

    Exit status: 0 when the report was written, 1 when OUT cannot be written, 2 when nothing
    could be loaded or the judgments file or labels cannot be used.
    """
    from analysis.judge._results import judge_names, merge_judgments, of_judge
    from analysis.report._data import ReportData
    from analysis.report._html import (  # Altair, vl-convert: on use
        build_report,
        report_findings,
        study_sections,
    )
    from analysis.study import study_tables

    source: LoadResult | Collection
    if no_index:
        source = _load_or_exit(paths)
    else:
        source = collection_or_exit(paths, index_path)
        _issues_or_exit(source.issues(), bool(source.session_ids))
    judged = merge_judgments(source.judgments, _judgments_or_exit(judgments))
    if judge_name is not None:
        if judge_name not in judge_names(judged):
            known = ", ".join(judge_names(judged)) or "none"
            click.echo(
                f"--judge {judge_name}: no such judge among the judgments ({known}).", err=True
            )
            sys.exit(EXIT_NOTHING_LOADED)
        judged = of_judge(judged, judge_name)
    findings = report_findings(source, judged)
    extra = []
    labelled = ""
    if labels is not None:
        study = _study_or_exit(labels, None)
        extra = study_sections(study_tables(study, _existing_store(labels, db)))
        labelled = f", agreement tables for {study.labels.frame['item_id'].n_unique()} items"
    data = ReportData.of(source)
    document = build_report(source, judged, findings, extra_sections=extra, show_paths=show_paths)
    sessions, turns = data.base.height, int(data.base["turns"].sum())
    try:
        Path(out).write_text(document, encoding="utf-8")
    except OSError as error:
        click.echo(f"{out}: cannot be written ({error.strerror}).", err=True)
        sys.exit(1)
    click.echo(
        f"Wrote {out}: {sessions} sessions, {turns} turns, "
        f"{len(judged)} judgments, {len(findings)} findings{labelled}"
    )


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="Council config (TOML): stage-1 judges, chairman, fields.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="Labels to write, .csv or .jsonl (not for --dry-run).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print what the council would be asked and its cost; no request.",
)
@max_cost_option
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Answer cache folder.")
@timeout_option
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    help="Requests in flight per model (default: the config's, else 4).",
)
def council(
    paths: tuple[str, ...],
    config_path: str,
    out: str | None,
    dry_run: bool,
    max_cost: float | None,
    cache_dir: str | None,
    timeout: float,
    concurrency: int | None,
) -> None:
    """Label each session with an LLM council: stage-1 judges label every field with their
    reasoning, then the chairman gives the council's label; labels as tsq agreement reads them.

    Exit status: 0 done; 1 --out cannot be written; 2 nothing to label, a bad option or config,
    the estimate above --max-cost, or the council cannot start (key, model).
    """
    import asyncio

    from tqdm import tqdm

    from analysis.council._config import CouncilError, read_council_config
    from analysis.council._cost import council_estimate
    from analysis.council._run import run_council, write_council_labels  # the SDKs: slow
    from analysis.llm import cost_refusal, dollars
    from analysis.llm._config import LLMError

    if out is None and not dry_run:
        raise click.UsageError("--out is required (unless --dry-run).")
    if out is not None and Path(out).suffix not in (".csv", ".jsonl"):
        raise click.BadParameter("labels are written as .csv or .jsonl", param_hint="--out")
    try:
        config = read_council_config(config_path)
    except CouncilError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    config = config.model_copy(
        update={"timeout": timeout} | ({"concurrency": concurrency} if concurrency else {})
    )
    result = _load_or_exit(paths)
    sessions = result.sessions
    estimate = council_estimate(sessions, config)
    if dry_run:
        for member in estimate.members:
            click.echo(
                f"{member.role} {member.model}: {member.requests} requests, about "
                f"{member.input_tokens:,} input and {member.output_tokens:,} output tokens, "
                f"{dollars(member.cost_usd)}"
            )
        click.echo(estimate.in_words())
        return
    if refusal := cost_refusal(estimate.cost_usd, max_cost):
        click.echo(refusal, err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    with tqdm(total=len(sessions), unit="session", disable=None, file=sys.stderr) as bar:
        try:
            rows, stats = asyncio.run(
                run_council(
                    sessions,
                    config,
                    Path(cache_dir) if cache_dir else None,
                    on_item=lambda: bar.update(1),
                )
            )
        except LLMError as error:
            click.echo(str(error), err=True)
            sys.exit(EXIT_NOTHING_LOADED)
    assert out is not None
    try:
        write_council_labels(rows, out)
    except OSError as error:
        click.echo(f"{out}: cannot be written ({error.strerror}).", err=True)
        sys.exit(1)
    for item_id, rater, reason in stats.failures:
        click.echo(f"{item_id} {rater}: no labels ({reason}).", err=True)
    cost = dollars(stats.cost_usd)
    click.echo(
        f"{stats.answers_asked} answers asked, {stats.cache_hits} from the cache, "
        f"{stats.http_requests} HTTP requests; tokens: {stats.input_tokens:,} input, "
        f"{stats.output_tokens:,} output ({cost})"
    )
    click.echo(f"Wrote {len(rows)} labels of {len(sessions)} sessions to {out}")


cli.add_command(labels_group)
cli.add_command(claude_group)
cli.add_command(index_command)
cli.add_command(trends_command)


@cli.command()
@click.argument("paths", nargs=-1)
@click.option(
    "--labels",
    required=True,
    type=click.Path(dir_okay=False),
    help="People's step labels: a label store (.sqlite) or a CSV/JSONL file.",
)
@click.option(
    "--judge",
    "judge_specs",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="A judge spec (TOML); repeat to compare. Default: the built-in tsq-rubric/3.",
)
@click.option(
    "--split",
    type=click.Choice(["dev", "test", "both"]),
    default="both",
    show_default=True,
    help="dev: measure every spec on dev; test: on test; both: on dev, then the spec chosen "
    "on dev (and the first spec) on test.",
)
@click.option("--propose", "propose_model", help="Model asked for a rubric amendment.")
@click.option("--propose-base-url", help="Another endpoint of the --propose model's API.")
@click.option(
    "--examples",
    type=click.IntRange(1, 20),
    help="Make a spec with this many dev disagreements as worked examples.",
)
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False),
    default=".",
    show_default=True,
    help="Where specs made by --propose and --examples are written, each with its diff.",
)
@click.option(
    "--test-share",
    type=click.FloatRange(0.05, 0.95),
    default=0.3,
    show_default=True,
    help="Share of new sessions put in the test split.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the split.")
@click.option(
    "--adopt",
    "adopt_spec",
    type=click.Path(dir_okay=False),
    help="Record this spec as adopted in the label store, and stop.",
)
@click.option(
    "--set-cause",
    "set_causes",
    multiple=True,
    metavar="ITEM=CAUSE",
    help="Record why the judge and people disagree on a step (menu_gap, context_gap, "
    "rubric_gap, severity, human_error, judge_error); repeatable; then stop.",
)
@click.option("--by", help="Who adopts or sets a cause; default: the user name.")
@dry_run_option
@max_cost_option
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@vote_cache_option
@concurrency_option
@timeout_option
def align(
    paths: tuple[str, ...],
    labels: str,
    judge_specs: tuple[str, ...],
    split: str,
    propose_model: str | None,
    propose_base_url: str | None,
    examples: int | None,
    out_dir: str,
    test_share: float,
    seed: int,
    adopt_spec: str | None,
    set_causes: tuple[str, ...],
    by: str | None,
    dry_run: bool,
    max_cost: float | None,
    as_json: bool,
    cache_dir: str | None,
    concurrency: int,
    timeout: float,
) -> None:
    """Measure judge specs against people's step labels, compare them, and propose better ones.

    PATHS hold the labelled sessions (and any judgments already made: a spec's judgments
    found there are used, not asked again). Exit status: 0 done; 2 nothing to measure, a bad
    option, spec or label file, the estimate above --max-cost, or a judge that cannot start.
    """
    from analysis._align_cli import (
        AlignOptions,
        adopt,
        load_label_set,
        record_causes,
        run,
        specs_or_exit,
    )

    if adopt_spec is not None:
        adopt(labels, adopt_spec, by)
        return
    if set_causes:
        record_causes(labels, set_causes, by)
        return
    if not paths:
        raise click.UsageError("give the PATHS of the labelled sessions.")
    specs = specs_or_exit(judge_specs)
    label_set = load_label_set(labels, test_share, seed)
    result = _load_or_exit(paths)
    options = AlignOptions(
        split=split,
        propose=propose_model,
        propose_base_url=propose_base_url,
        examples=examples or 0,
        out_dir=Path(out_dir),
        dry_run=dry_run,
        max_cost=max_cost,
        as_json=as_json,
        settings={
            "concurrency": concurrency,
            "timeout": timeout,
            "cache_dir": Path(cache_dir) if cache_dir else None,
        },
    )
    run(result, label_set, specs, options, labels)


def main() -> None:
    cli()
