"""The alignment loop: judge the labelled steps with every spec, measure each against people
on dev, compare them in pairs, choose on dev, and measure the chosen one on test.

The choice between specs reads dev figures only; test figures are computed for the chosen
spec (and the first spec given, its baseline) after the choice is made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from analysis._scores import judge_name, majority_label
from analysis.align._labels import LabelSet, Split, session_of
from analysis.align._metrics import Comparison, RaterScore, SpecScore, compare, score_spec
from analysis.align._tune import (
    Disagreement,
    amended_spec,
    counts_by,
    disagreements,
    examples_spec,
    parse_amendment,
    proposal_request,
    require_dev,
)
from analysis.findings import Finding
from analysis.judge import JudgeSpec, RunEstimate, estimate_run, judge_rendered
from analysis.llm import LLMConfig, LLMError, RunStats, open_client
from analysis.models import Judgment, Session, step_item_id
from analysis.render import JudgeInput, render_step, select_steps
from analysis.study import (
    FieldAgreement,
    LabelSet as RaterLabels,
    LabelStore,
    agreement_report,
    default_config,
    step_label_rows,
    with_tool_selection,
)

SplitChoice = Literal["dev", "test", "both"]


class PeopleAgreement(BaseModel):
    """People among themselves on the steps several of them labelled: the ceiling a judge can
    be expected to reach."""

    steps: int
    """Steps labelled by two people or more."""
    all_agree: float | None
    pairs: list[dict[str, object]] = Field(default_factory=list)
    """Per pair of labellers: n, agreement, kappa and its interval."""


class AlignReport(BaseModel):
    """What ``tsq align --json`` prints (see docs/alignment.md for the contract)."""

    specs: list[SpecScore]
    comparisons: list[Comparison]
    disagreements: list[Disagreement]
    chosen: str | None
    """The spec chosen on dev (adopted, or the best dev kappa), measured on test."""
    people: PeopleAgreement
    labelled: dict[str, int]
    """Steps with a people's label: dev, test, ties (people split evenly), missing (not
    found in the sessions given)."""
    causes: list[tuple[str, int]]
    tools: list[tuple[str, int]]
    new_specs: list[str] = Field(default_factory=list)
    """``judge_id`` of the specs this run made (proposal, examples)."""
    scorers: list[RaterScore] = Field(default_factory=list)
    """Trained step scorers measured on the test part beside the specs (``--scorer``)."""


def people_agreement(label_set: LabelSet) -> PeopleAgreement:
    labels = [label for ref in label_set.refs.values() for label in ref.labels]
    several = sum(len(ref.labels) > 1 for ref in label_set.refs.values())
    if several == 0:
        return PeopleAgreement(steps=0, all_agree=None)
    rows = RaterLabels(step_label_rows(labels), with_tool_selection(default_config()), [])
    field: FieldAgreement = agreement_report(rows).fields["tool_selection"]
    return PeopleAgreement(
        steps=several,
        all_agree=field.all_agree.agreement,
        pairs=[
            {
                "a": p.rater_a,
                "b": p.rater_b,
                "n": p.n,
                "agreement": p.agreement,
                "kappa": p.kappa,
                "kappa_ci": p.kappa_ci,
            }
            for p in field.pairs
        ],
    )


def labelled_steps(
    sessions: Sequence[Session], label_set: LabelSet
) -> dict[str, tuple[Session, int, int, str | None]]:
    """Each labelled step found in ``sessions``: item id -> (session, turn, step, parent call)."""
    wanted = {session_of(item) for item in label_set.refs}
    found = {}
    for session in sessions:
        if session.session_id not in wanted:
            continue
        for step in select_steps(session, "all", text_steps=True, subagents=True):
            item = step_item_id(
                session.session_id, step.turn.index, step.index, step.parent_call_id
            )
            if item in label_set.refs:
                found[item] = (session, step.turn.index, step.index, step.parent_call_id)
    return found


def render_items(
    steps: dict[str, tuple[Session, int, int, str | None]], items: Sequence[str], spec: JudgeSpec
) -> dict[str, JudgeInput]:
    """The judge's input of each step, under the spec's condition and step budget."""
    units = {}
    for item in items:
        if item not in steps:
            continue
        session, turn, step, parent = steps[item]
        units[item] = render_step(
            session,
            session.turns[turn],
            step,
            spec.condition,
            options=spec.render_options(),
            parent_call_id=parent,
        )
    return units


@dataclass
class Judging:
    """How the loop gets judgments: the judgments it already has (from files, or earlier
    runs in the vote cache) and the settings of new runs."""

    known: list[Judgment] = field(default_factory=list)
    settings: dict[str, object] = field(default_factory=dict)
    """JudgeConfig fields of the run's own (key, cache folder, timeout, concurrency)."""
    on_unit: Callable[[], None] | None = None
    ask: bool = True
    """False: use only the judgments known (the app without a key); the rest stay unjudged."""
    runs: list[RunStats] = field(default_factory=list)
    """What each model run cost (one per spec judged, one per proposal)."""

    def have(self, spec: JudgeSpec, units: dict[str, JudgeInput]) -> dict[str, Judgment]:
        return {
            j.item_id: j
            for j in self.known
            if judge_name(j) == spec.judge_id and j.item_id in units and j.unit == "step"
        }

    def judge(self, spec: JudgeSpec, units: dict[str, JudgeInput]) -> dict[str, Judgment]:
        """The spec's judgment of every unit: known ones reused, the rest asked."""
        have = self.have(spec, units)
        missing = [unit for item, unit in units.items() if item not in have]
        if missing and self.ask:
            config = spec.judge_config(**self.settings)
            made, stats = asyncio.run(judge_rendered(missing, config, on_turn=self.on_unit))
            self.runs.append(stats)
            self.known += made
            have.update({j.item_id: j for j in made})
        return have


def plan(
    sessions: Sequence[Session],
    label_set: LabelSet,
    specs: Sequence[JudgeSpec],
    judging: Judging,
    split: SplitChoice = "both",
) -> list[tuple[JudgeSpec, list[JudgeInput]]]:
    """Per spec, the labelled steps a run would have to ask about (no judgment known yet).
    For ``both`` every spec is counted on test too: an upper bound, as only the chosen spec
    and the first are measured there."""
    steps = labelled_steps(sessions, label_set)
    parts: list[Split] = ["test"] if split == "test" else ["dev"]
    if split == "both":
        parts.append("test")
    items = [item for part in parts for item in label_set.items(part) if item in steps]
    result = []
    for spec in specs:
        units = render_items(steps, items, spec)
        have = judging.have(spec, units)
        result.append((spec, [unit for item, unit in units.items() if item not in have]))
    return result


def estimate(planned: Sequence[tuple[JudgeSpec, list[JudgeInput]]]) -> list[RunEstimate]:
    """What asking the planned units would cost, per spec."""
    return [
        estimate_run(units, spec.votes, spec.model, spec.system_text()) for spec, units in planned
    ]


def _score(
    spec: JudgeSpec,
    split: str,
    items: Sequence[str],
    label_set: LabelSet,
    got: dict[str, Judgment],
) -> SpecScore:
    scored = [item for item in items if item in got and got[item].score is not None]
    people = [label_set.refs[item].value or "" for item in scored]
    judge = [majority_label(got[item].score or 0.0) for item in scored]
    return score_spec(
        spec.judge_id,
        spec.name,
        split,
        people,
        judge,
        unjudged=len(items) - len(scored),
        sessions=[session_of(item) for item in scored],
    )


def _compare(
    a: JudgeSpec,
    b: JudgeSpec,
    split: str,
    items: Sequence[str],
    label_set: LabelSet,
    got: dict[str, dict[str, Judgment]],
) -> Comparison:
    first, second = got[a.judge_id], got[b.judge_id]
    both = [
        item
        for item in items
        if first.get(item) is not None
        and second.get(item) is not None
        and first[item].score is not None
        and second[item].score is not None
    ]
    return compare(
        a.judge_id,
        b.judge_id,
        split,
        [label_set.refs[item].value or "" for item in both],
        [majority_label(first[item].score or 0.0) for item in both],
        [majority_label(second[item].score or 0.0) for item in both],
        sessions=[session_of(item) for item in both],
    )


def choose(scores: Sequence[SpecScore], adopted: str | None) -> str | None:
    """The adopted spec if it was measured, else the best dev kappa (then agreement, then the
    order given). Reads dev scores only."""
    dev = [score for score in scores if score.split == "dev"]
    if adopted is not None and any(score.judge_id == adopted for score in dev):
        return adopted
    ranked = [score for score in dev if score.n]
    if not ranked:
        return None
    best = max(
        ranked,
        key=lambda s: (
            s.kappa if s.kappa is not None else -2.0,
            s.agreement or 0.0,
            -ranked.index(s),
        ),
    )
    return best.judge_id


async def _propose(
    parent: JudgeSpec,
    label_set: LabelSet,
    found: Sequence[Disagreement],
    config: LLMConfig,
    stats: RunStats,
) -> JudgeSpec:
    async with open_client(config, stats) as client:
        await client.resolve_model()
        answer = await client.ask_structured(
            proposal_request(parent, label_set, found), parse_amendment, what="amendment"
        )
    if answer.value is None:
        raise LLMError(f"No rubric amendment from {config.model}: {answer.failure}.")
    return amended_spec(parent, answer.value)


@dataclass
class Tuning:
    """New specs to make from the first spec's dev disagreements."""

    propose: LLMConfig | None = None
    examples: int = 0


def run_align(
    sessions: Sequence[Session],
    label_set: LabelSet,
    specs: Sequence[JudgeSpec],
    judging: Judging,
    split: SplitChoice = "both",
    tuning: Tuning | None = None,
    findings: Sequence[Finding] = (),
    adopted: str | None = None,
) -> tuple[AlignReport, list[JudgeSpec]]:
    """The loop (see the module); returns the report and the specs it made."""
    steps = labelled_steps(sessions, label_set)
    parts: list[Split] = ["test"] if split == "test" else ["dev"]
    items = {part: [i for i in label_set.items(part) if i in steps] for part in ("dev", "test")}
    all_specs = list(specs)
    got: dict[str, dict[str, Judgment]] = {}
    units: dict[str, dict[str, JudgeInput]] = {}

    def measure(spec: JudgeSpec, part: Split) -> dict[str, Judgment]:
        units.setdefault(spec.judge_id, {}).update(render_items(steps, items[part], spec))
        wanted = {i: units[spec.judge_id][i] for i in items[part] if i in units[spec.judge_id]}
        judged = judging.judge(spec, wanted)
        got.setdefault(spec.judge_id, {}).update(judged)
        return judged

    for spec in all_specs:
        for part in parts:
            measure(spec, part)
    found: list[Disagreement] = []
    if "dev" in parts:
        for spec in all_specs:
            dev_judgments = [got[spec.judge_id][i] for i in items["dev"] if i in got[spec.judge_id]]
            found += disagreements(label_set, dev_judgments, units[spec.judge_id], findings)
    made = _tune(all_specs[0], label_set, found, units, tuning, judging.runs) if tuning else []
    for spec in made:
        measure(spec, "dev")
    all_specs += made
    scores = [_score(s, p, items[p], label_set, got[s.judge_id]) for s in all_specs for p in parts]
    comparisons = [
        _compare(a, b, p, items[p], label_set, got)
        for p in parts
        for i, a in enumerate(all_specs)
        for b in all_specs[i + 1 :]
    ]
    chosen = choose(scores, adopted) if "dev" in parts else None
    if split == "both" and chosen is not None:
        baseline = all_specs[0]
        winner = next(s for s in all_specs if s.judge_id == chosen)
        for spec in [winner, baseline] if winner is not baseline else [winner]:
            measure(spec, "test")
            scores.append(_score(spec, "test", items["test"], label_set, got[spec.judge_id]))
        if winner is not baseline:
            comparisons.append(_compare(baseline, winner, "test", items["test"], label_set, got))
    first_found = [d for d in found if d.judge_id == all_specs[0].judge_id] or found
    report = AlignReport(
        specs=scores,
        comparisons=comparisons,
        disagreements=found,
        chosen=chosen,
        people=people_agreement(label_set),
        labelled={
            "dev": len(items["dev"]),
            "test": len(items["test"]),
            "ties": len(label_set.ties()),
            "missing": sum(1 for i in label_set.refs if i not in steps),
        },
        causes=counts_by(first_found, "cause"),
        tools=counts_by(first_found, "tool"),
        new_specs=[spec.judge_id for spec in made],
    )
    return report, made


def _tune(
    parent: JudgeSpec,
    label_set: LabelSet,
    found: Sequence[Disagreement],
    units: dict[str, dict[str, JudgeInput]],
    tuning: Tuning,
    runs: list[RunStats],
) -> list[JudgeSpec]:
    """The specs made from the parent's dev disagreements: examples, and a proposal."""
    own = [d for d in found if d.judge_id == parent.judge_id]
    require_dev(label_set, (d.item_id for d in own))
    made = []
    if tuning.examples and own:
        made.append(examples_spec(parent, label_set, own, units[parent.judge_id], tuning.examples))
    if tuning.propose is not None and own:
        stats = RunStats(model=tuning.propose.model)
        runs.append(stats)
        made.append(asyncio.run(_propose(parent, label_set, own, tuning.propose, stats)))
    return made


def sample_store() -> LabelStore:
    """The label store of the bundled alignment sample: the one ``tsq align --labels
    sample_data/alignment/labels.csv`` keeps its split in, with the sample's labels imported
    the first time, so people's labels from the Turn page join them."""
    from analysis._samples import sample_data_dir
    from analysis.align._labels import read_step_labels
    from analysis.study import default_store_path

    labels_file = sample_data_dir() / "alignment" / "labels.csv"
    store = LabelStore(default_store_path(labels_file))
    if not store.step_labels_version():
        store.save_step_labels(read_step_labels(labels_file)[0])
    return store


def sample_loop(store: LabelStore) -> AlignReport:
    """The bundled alignment sample's loop from its bundled judgments (nothing is asked),
    measured on the labels of ``store`` (:func:`sample_store`): what the app shows without a
    key."""
    from analysis._samples import sample_data_dir
    from analysis.align._labels import label_set
    from analysis.ingest import load
    from analysis.judge import read_spec

    folder = sample_data_dir() / "alignment"
    result = load([folder / "transcripts", folder / "judgments"])
    specs = [read_spec(folder / "specs" / name) for name in SAMPLE_SPECS]
    report, _ = run_align(
        result.sessions, label_set(store), specs, Judging(known=list(result.judgments), ask=False)
    )
    return report


SAMPLE_SPECS = ("default.judge.toml", "team-rules.judge.toml")
