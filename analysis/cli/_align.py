"""``tsq labels import``, ``tsq labels export`` and ``tsq align``: the printers and the flow over
``analysis.align``.

Registered on the ``tsq`` group by ``analysis.cli``; like every command, imports the analysis
package only inside the commands.
"""

from __future__ import annotations

import getpass
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from analysis._format import interval, number, share
from analysis.cli._common import (
    EXIT_REFUSED,
    _load_or_exit,
    concurrency_option,
    dry_run_option,
    max_cost_option,
    scorer_or_exit,
    timeout_option,
    vote_cache_option,
)

if TYPE_CHECKING:
    from analysis.align import (
        AlignReport,
        Comparison,
        LabelSet,
        RaterScore,
        SpecScore,
        SplitChoice,
    )
    from analysis.judge import JudgeSpec, RunEstimate
    from analysis.models import LoadResult, ParseIssue
    from analysis.scorer import ScorerCard, TrainedScorer
    from analysis.study import LabelStore, StepLabel

EXIT_UNUSABLE = 2
STORE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def _store_or_exit(path: Path) -> LabelStore:
    import sqlite3

    from analysis.study import LabelStore, LabelStoreError

    try:
        return LabelStore(path)
    except LabelStoreError as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_UNUSABLE)
    except (OSError, sqlite3.Error) as error:
        click.echo(f"{path}: cannot open the label store ({error}).", err=True)
        sys.exit(1)


def labels_source(labels: str) -> tuple[LabelStore, Path | None]:
    """``--labels DB|FILE``: a store, or a labels file read beside its own default store
    (where its split is kept)."""
    from analysis.study import default_store_path

    path = Path(labels)
    if path.suffix in STORE_SUFFIXES:
        return _store_or_exit(path), None
    return _store_or_exit(default_store_path(path)), path


def read_label_file(file: Path) -> tuple[list[StepLabel], list[ParseIssue]]:
    """A step-label file's labels; its issues printed, a file that cannot be read exit 2."""
    from analysis.align import read_step_labels

    try:
        labels, issues = read_step_labels(file)
    except ValueError as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_UNUSABLE)
    for issue in issues:
        click.echo(str(issue), err=True)
    return labels, issues


def load_label_set(labels: str, test_share: float, seed: int) -> LabelSet:
    """The label set of ``--labels``; file issues are printed, an unusable file exits 2."""
    from analysis.align import label_set

    store, file = labels_source(labels)
    extra, issues = read_label_file(file) if file is not None else ([], [])
    result = label_set(store, extra, test_share, seed, issues)
    if not result.refs:
        click.echo(f"{labels}: no step labels.", err=True)
        sys.exit(EXIT_UNUSABLE)
    return result


@click.group(name="labels")
def labels_group() -> None:
    """People's step labels: the label set judges are measured on."""


@labels_group.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--db",
    required=True,
    type=click.Path(dir_okay=False),
    help="The label store (SQLite) to add them to.",
)
def import_labels(file: str, db: str) -> None:
    """Add step labels from a CSV or JSONL file (session_id, turn_index, step_index, optional
    parent_call_id, value, reason, labeller); bad rows are reported, the rest kept."""
    import sqlite3

    labels, issues = read_label_file(Path(file))
    store = _store_or_exit(Path(db))
    try:
        done = store.import_step_labels(labels)
    except (OSError, sqlite3.Error) as error:
        click.echo(f"{db}: cannot save the step labels ({error}).", err=True)
        sys.exit(1)
    repeated = f"{done.repeated} duplicate{'' if done.repeated == 1 else 's'} in the file skipped"
    click.echo(
        f"Imported {done.added} step labels into {db} ({done.already} already there, "
        f"{repeated}, {len(issues)} rows with issues)."
    )
    if not labels:
        sys.exit(EXIT_UNUSABLE)


@labels_group.command(name="export")
@click.option(
    "--db",
    required=True,
    type=click.Path(dir_okay=False),
    help="The label store (SQLite) to export.",
)
@click.option(
    "--format",
    "form",
    type=click.Choice(["csv", "jsonl"]),
    default="csv",
    show_default=True,
    help="CSV (one header, every column) or JSON Lines (one object a label).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    show_default=True,
    help="The file to write; - for standard output.",
)
def export_labels(db: str, form: str, out: str) -> None:
    """Write every label of a store (step labels, decisions, causes, adoptions) with who saved
    it and when. Exit status: 0 written; 1 the store or the file cannot be read or written;
    2 no such store, or a store of a newer layout."""
    import sqlite3

    from analysis.study import write_labels

    path = Path(db)
    if not path.is_file():
        click.echo(f"{db}: no such label store.", err=True)
        sys.exit(EXIT_UNUSABLE)
    store = _store_or_exit(path)
    fmt: Literal["csv", "jsonl"] = "jsonl" if form == "jsonl" else "csv"
    try:
        with click.open_file(out, "w", encoding="utf-8", atomic=out != "-") as stream:
            count = write_labels(store, stream, fmt)
    except sqlite3.Error as error:
        click.echo(f"{db}: cannot read the labels ({error}).", err=True)
        sys.exit(1)
    except OSError as error:
        click.echo(f"{out}: cannot write the labels ({error.strerror or error}).", err=True)
        sys.exit(1)
    if out != "-":
        click.echo(f"Exported {count} labels from {db} to {out}.", err=True)


labels_option = click.option(
    "--labels",
    required=True,
    type=click.Path(dir_okay=False),
    help="People's step labels: a label store (.sqlite) or a CSV/JSONL file.",
)


def split_options(command: Callable[..., None]) -> Callable[..., None]:
    """``--test-share`` and ``--seed``: the split of the sessions into dev and test."""
    command = click.option(
        "--seed", type=int, default=0, show_default=True, help="Seed of the split."
    )(command)
    return click.option(
        "--test-share",
        type=click.FloatRange(0.05, 0.95),
        default=0.3,
        show_default=True,
        help="Share of new sessions put in the test split.",
    )(command)


def print_score(score: SpecScore) -> None:
    click.echo(
        f"  {score.judge_id}: n={score.n} agreement {share(score.agreement)}"
        f"{interval(score.agreement_ci, True, sessions=score.sessions)} kappa "
        f"{number(score.kappa)}{interval(score.kappa_ci, sessions=score.sessions)}; "
        f"always {score.majority_label!r} {share(score.majority_baseline)}; balanced accuracy "
        f"{number(score.balanced_accuracy)}"
        + (f"; {score.unjudged} steps unscored" if score.unjudged else "")
    )
    for c in score.per_class:
        click.echo(
            f"    {c.value:<9} support {c.support:>3}  precision {number(c.precision)}  "
            f"recall {number(c.recall)}  F1 {number(c.f1)}  specificity "
            f"{number(c.specificity)}"
        )


def print_report(report: AlignReport) -> None:
    counts = report.labelled
    click.echo(
        f"labelled steps: {counts['dev']} dev, {counts['test']} test ({counts['ties']} with "
        f"people evenly split, {counts['missing']} not found in the sessions given)"
    )
    people = report.people
    if people.steps:
        click.echo(
            f"people among themselves: {people.steps} steps labelled by two or more, all "
            f"agree on {share(people.all_agree)}"
        )
        for pair in people.pairs:
            click.echo(
                f"  {pair['a']} vs {pair['b']}: n={pair['n']} agreement "
                f"{share(pair['agreement'])} kappa {number(pair['kappa'])}"  # type: ignore[arg-type]
            )
    else:
        click.echo("people among themselves: no step labelled by two people yet")
    for split in ("dev", "test"):
        scores = [s for s in report.specs if s.split == split]
        if scores:
            click.echo(f"{split}:")
            for score in scores:
                print_score(score)
        _print_comparisons([c for c in report.comparisons if c.split == split])
        if split == "dev" and report.chosen:
            click.echo(f"chosen on dev: {report.chosen}")
    for scorer in report.scorers:
        _print_scorer(scorer)
    _print_disagreements(report)


def _print_scorer(scorer: RaterScore) -> None:
    """A trained scorer on test: its figures, its verdicts and its cascades to the specs."""
    click.echo(f"trained scorer {scorer.name} on test:")
    print_score(scorer.score)
    if scorer.left_out:
        click.echo(f"  {scorer.left_out} test steps of sessions it was trained on left out")
    for verdict in scorer.versus:
        click.echo(f"  {verdict.in_words()}")
    for judge in dict.fromkeys(point.judge_id for point in scorer.cascade):
        click.echo(f"  cascading to {judge} (the least sure steps first):")
        for point in scorer.cascade:
            if point.judge_id == judge:
                click.echo(f"    {point.in_words()}")


def _print_comparisons(comparisons: list[Comparison]) -> None:
    for comparison in comparisons:
        click.echo(f"  {comparison.in_words()}")


def _print_disagreements(report: AlignReport) -> None:
    if not report.disagreements:
        return
    causes = ", ".join(f"{cause} {n}" for cause, n in report.causes)
    tools = ", ".join(f"{tool or '(no call)'} {n}" for tool, n in report.tools)
    click.echo(f"why the judge disagrees (dev): by cause {causes}; by tool {tools}")
    for d in report.disagreements:
        reason = "; ".join(d.reasons) or "no reason given"
        click.echo(
            f"  {d.item_id} {d.judge_id} [{d.cause or 'unset'}] people {d.people}, judge "
            f"{d.judge} ({d.vote_fraction:.2f}) on {d.tool or '(no call)'}: {reason}"
        )
        if d.evidence:
            click.echo(f"      evidence: {d.evidence}")


def specs_or_exit(paths: tuple[str, ...]) -> list[JudgeSpec]:
    from analysis.judge import JudgeSpecError, default_spec, read_spec

    try:
        return [read_spec(path) for path in paths] if paths else [default_spec()]
    except JudgeSpecError as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_UNUSABLE)


def write_spec(spec: JudgeSpec, parent: JudgeSpec, out_dir: Path) -> Path:
    """A spec the run made, as a file beside its diff against its parent."""
    from analysis.align import spec_diff
    from analysis.judge import spec_toml

    out_dir.mkdir(parents=True, exist_ok=True)
    name = spec.name.replace("/", "-")
    path = out_dir / f"{name}.judge.toml"
    path.write_text(spec_toml(spec), encoding="utf-8")
    diff = spec_diff(parent, spec, f"{parent.name}", f"{path}")
    (out_dir / f"{name}.diff").write_text(diff, encoding="utf-8")
    return path


def adopt(labels: str, spec_path: str, who: str | None) -> None:
    from analysis.judge import spec_toml
    from analysis.study import Adoption

    spec = specs_or_exit((spec_path,))[0]
    store, _ = labels_source(labels)
    who = (who or "").strip() or getpass.getuser()
    adoption = Adoption(judge_id=spec.judge_id, spec_toml=spec_toml(spec), adopted_by=who)
    store.adopt(adoption)
    click.echo(
        f"Adopted {spec.judge_id} ({adoption.adopted_by}, {adoption.adopted_at:%Y-%m-%d %H:%M} "
        f"UTC). Run tsq judge --judge {spec_path} over judged sessions to see which verdicts "
        "change."
    )


@dataclass
class AlignOptions:
    split: str
    propose: str | None
    propose_base_url: str | None
    examples: int
    out_dir: Path
    dry_run: bool
    max_cost: float | None
    as_json: bool
    settings: dict[str, object]
    scorers: list[tuple[TrainedScorer, ScorerCard]] = field(default_factory=list)


def _check_cost(estimates: list[RunEstimate], options: AlignOptions) -> None:
    """Print the estimate (and stop, for --dry-run); refuse above --max-cost."""
    from analysis.llm import cost_refusal, dollars

    units = sum(e.units for e in estimates)
    requests = sum(e.requests for e in estimates)
    costs = [e.cost_cached_usd for e in estimates if e.units]
    total = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
    words = (
        f"{units} steps to judge ({requests} requests) across {len(estimates)} specs, at most; "
        f"estimated cost {dollars(total)} with prompt caching"
        + (", plus the proposal" if options.propose else "")
    )
    unfit = next((e.refusal for e in estimates if e.refusal), None)
    if unfit:  # what the run would refuse, the dry run refuses too
        click.echo(unfit, err=True)
        sys.exit(EXIT_REFUSED)
    if options.dry_run:
        click.echo(words)
        sys.exit(0)
    refusal = cost_refusal(total, options.max_cost) if units else None
    if refusal:
        click.echo(refusal, err=True)
        sys.exit(EXIT_REFUSED)


def run(
    result: LoadResult,
    label_set: LabelSet,
    specs: list[JudgeSpec],
    options: AlignOptions,
    labels: str,
) -> None:
    """The loop of ``tsq align`` over loaded sessions, printed as text or JSON."""
    from tqdm import tqdm

    from analysis.align import Judging, Tuning, estimate, plan, run_align
    from analysis.findings import collect_findings
    from analysis.llm import LLMConfig, LLMError

    split: SplitChoice = (
        "dev" if options.split == "dev" else "test" if options.split == "test" else "both"
    )
    judging = Judging(known=list(result.judgments), settings=options.settings)
    planned = plan(result.sessions, label_set, specs, judging, split)
    _check_cost(estimate(planned), options)
    adopted = _adopted(labels)
    tuning = Tuning(
        propose=LLMConfig(
            model=options.propose,
            base_url=options.propose_base_url,
            timeout=float(str(options.settings["timeout"])),
        )
        if options.propose
        else None,
        examples=options.examples,
    )
    todo = sum(len(units) for _, units in planned)
    with tqdm(total=todo, unit="step", disable=None, file=sys.stderr) as bar:
        judging.on_unit = lambda: bar.update(1)
        try:
            report, made = run_align(
                result.sessions,
                label_set,
                specs,
                judging,
                split,
                tuning,
                collect_findings(result.sessions),
                adopted,
            )
        except LLMError as error:
            click.echo(str(error), err=True)
            sys.exit(EXIT_UNUSABLE)
    if not any(score.n for score in report.specs):
        click.echo(f"{labels}: no labelled step of the sessions given was judged.", err=True)
        sys.exit(EXIT_UNUSABLE)
    if options.scorers:
        from analysis.scorer import measure_beside_specs

        report.scorers = measure_beside_specs(
            report, result.sessions, label_set, judging.known, options.scorers
        )
    written = [write_spec(spec, specs[0], options.out_dir) for spec in made]
    if options.as_json:
        print_json(report)
        return
    print_report(report)
    for path in written:
        click.echo(f"wrote {path} (its diff against {specs[0].name}: {path.with_suffix('')}.diff)")


def _adopted(labels: str) -> str | None:
    store, _ = labels_source(labels)
    adoptions = store.adoptions()
    return adoptions[-1].judge_id if adoptions else None


def record_causes(labels: str, settings: tuple[str, ...], who: str | None) -> None:
    """``--set-cause ITEM=CAUSE``: a person's cause for each step, saved in the label store."""
    from analysis.align import CAUSES
    from analysis.study import CauseSetting

    store, _ = labels_source(labels)
    who = (who or "").strip() or getpass.getuser()
    parsed = []
    for setting in settings:
        item, _, cause = setting.rpartition("=")
        if not item or cause not in CAUSES:
            click.echo(
                f"--set-cause {setting}: give ITEM=CAUSE, CAUSE one of {', '.join(CAUSES)}.",
                err=True,
            )
            sys.exit(EXIT_UNUSABLE)
        parsed.append(CauseSetting(item_id=item, cause=cause, set_by=who))
    for cause_setting in parsed:
        store.set_cause(cause_setting)
        click.echo(f"{cause_setting.item_id}: cause {cause_setting.cause} (set by {who})")


def print_json(report: AlignReport) -> None:
    """The report, each scorer's cascades as the top-level ``cascade`` entries."""
    shown = report.model_dump(mode="json", exclude={"scorers": {"__all__": {"cascade"}}})
    shown["cascade"] = [
        point.model_dump(mode="json") for scorer in report.scorers for point in scorer.cascade
    ]
    click.echo(json.dumps(shown))


@click.command()
@click.argument("paths", nargs=-1)
@labels_option
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
@split_options
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
@click.option("--who", help="Who adopts or sets a cause; default: the user name.")
@click.option(
    "--scorer",
    "scorer_dirs",
    multiple=True,
    type=click.Path(file_okay=False),
    help="A trained step scorer's folder, measured on test beside the specs; repeatable.",
)
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
    who: str | None,
    scorer_dirs: tuple[str, ...],
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
    if adopt_spec is not None:
        adopt(labels, adopt_spec, who)
        return
    if set_causes:
        record_causes(labels, set_causes, who)
        return
    if not paths:
        raise click.UsageError("give the PATHS of the labelled sessions.")
    if scorer_dirs and split == "dev":
        raise click.UsageError("a scorer is measured on the test part: use --split test or both.")
    scorers = [scorer_or_exit(folder) for folder in scorer_dirs]
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
        scorers=scorers,
    )
    run(result, label_set, specs, options, labels)
