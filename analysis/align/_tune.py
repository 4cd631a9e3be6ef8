"""Why the judge disagrees with people, and new specs made from the disagreements.

Everything that tunes a judge reads dev steps only: :func:`require_dev` is called by each of
:func:`disagreements`, :func:`examples_spec` and :func:`proposal_request`, and raises
:class:`LeakError` if a test step reaches it.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from analysis._scores import judge_name, majority_label
from analysis.align._labels import LabelSet
from analysis.findings import Finding
from analysis.judge import JudgeExample, JudgeSpec
from analysis.llm import StructuredRequest, tool_for
from analysis.models import Judgment, step_item_id
from analysis.render import JudgeInput

Cause = Literal["menu_gap", "context_gap", "rubric_gap", "severity", "human_error", "judge_error"]
CAUSES: tuple[str, ...] = Cause.__args__  # type: ignore[attr-defined]
EXAMPLE_CHARS = 1500
"""A worked example's step is cut to this length, so a few fit the cached prefix."""
MENU_GAP_CODES = frozenset(
    {"CALLED_TOOL_NOT_IN_CATALOG", "USED_TOOLS_MISSING_FROM_CATALOG", "MISSING_DESCRIPTIONS"}
)


class LeakError(RuntimeError):
    """A test-split step reached something that tunes a judge."""


def require_dev(label_set: LabelSet, items: Iterable[str]) -> None:
    """Refuse a test step: examples, proposals and the choice between specs read dev only."""
    leaked = sorted(item for item in items if label_set.split_of(item) != "dev")
    if leaked:
        raise LeakError(f"test-split steps may not tune a judge: {', '.join(leaked[:5])}")


class Disagreement(BaseModel):
    """A dev step where a spec's majority verdict differs from the people's label."""

    item_id: str
    session_id: str
    turn_index: int
    step_index: int | None
    parent_call_id: str | None = None
    judge_id: str
    split: str
    people: str
    judge: str
    vote_fraction: float
    tool: str
    """The tools the step called, in order."""
    ask: str
    reasons: list[str]
    """The people's reasons, each after its labeller's name."""
    judge_reasoning: str
    """The reasoning of a vote that gave the majority verdict."""
    findings: list[str] = Field(default_factory=list)
    """Codes of the step's findings under the spec's condition."""
    cause: Cause | None
    """Suggested from the evidence, or None: for a person to set."""
    evidence: str | None = None
    """Why that cause was suggested."""


def _named_tools(reasons: Sequence[str], known: set[str]) -> list[str]:
    words = re.findall(r"[A-Za-z_][\w.-]*", " ".join(reasons))
    return list(dict.fromkeys(word for word in words if word in known))


def suggest_cause(
    unit: JudgeInput,
    people: str,
    judge: str,
    reasons: Sequence[str],
    codes: Sequence[str],
    known_tools: set[str],
) -> tuple[Cause | None, str | None]:
    """A cause where the evidence shows one: a finding about the menu or a tool people name
    that the judge's menu lacked or left undescribed (``menu_gap``); the step's input cut to
    fit (``context_gap``); people naming a tool the judge saw described and yet passed the
    choice (``rubric_gap``: a policy the rubric does not state). Otherwise None."""
    on_menu = {tool.name: tool for tool in unit.tools}
    named = _named_tools(reasons, known_tools)
    called = set(re.findall(r"^(\w[\w.-]*)\(", unit.output, re.M))
    menu_codes = sorted(MENU_GAP_CODES.intersection(codes))
    if menu_codes:
        return "menu_gap", f"finding {menu_codes[0]} on this step"
    missing = [name for name in named if name not in on_menu or not on_menu[name].description]
    if missing:
        return "menu_gap", f"people name {missing[0]}, absent or undescribed on the judge's menu"
    if unit.cuts or unit.context_truncated:
        return "context_gap", "; ".join(unit.cuts) or "the earlier turns' summary was cut"
    better = [name for name in named if name not in called]
    if people == "incorrect" and judge == "correct" and better:
        return "rubric_gap", f"{better[0]} was on the menu, described, and the judge passed"
    return None, None


def _reasoning(judgment: Judgment) -> str:
    verdict = majority_label(judgment.score or 0.0)
    return next((v.reasoning for v in judgment.votes if v.verdict == verdict), "")


def disagreements(
    label_set: LabelSet,
    judgments: Sequence[Judgment],
    units: dict[str, JudgeInput],
    findings: Sequence[Finding] = (),
) -> list[Disagreement]:
    """Every dev step where a spec's majority and the people's label differ, with a cause
    suggested from the evidence (:func:`suggest_cause`)."""
    scored = [j for j in judgments if j.score is not None and j.item_id in units]
    dev = [j for j in scored if label_set.split_of(j.item_id) == "dev"]
    require_dev(label_set, (j.item_id for j in dev))
    known = {tool.name for unit in units.values() for tool in unit.tools}
    codes: dict[tuple[str, str], list[str]] = {}
    for finding in findings:
        if finding.step_index is not None and finding.turn_index is not None:
            item = step_item_id(
                finding.session_id, finding.turn_index, finding.step_index, finding.parent_call_id
            )
            codes.setdefault((item, finding.condition or ""), []).append(finding.code)
    result = []
    for judgment in dev:
        ref = label_set.refs.get(judgment.item_id)
        verdict = majority_label(judgment.score or 0.0)
        if ref is None or ref.value is None or ref.value == verdict:
            continue
        unit = units[judgment.item_id]
        step_codes = [
            *codes.get((judgment.item_id, ""), []),
            *codes.get((judgment.item_id, judgment.condition), []),
        ]
        cause, evidence = suggest_cause(unit, ref.value, verdict, ref.reasons, step_codes, known)
        if judgment.item_id in label_set.causes:
            cause = label_set.causes[judgment.item_id]  # type: ignore[assignment]
            evidence = f"set by {label_set.causes_by[judgment.item_id]}"
        result.append(
            Disagreement(
                item_id=judgment.item_id,
                session_id=judgment.session_id,
                turn_index=judgment.turn_index,
                step_index=judgment.step_index,
                parent_call_id=judgment.parent_call_id,
                judge_id=judge_name(judgment),
                split="dev",
                people=ref.value,
                judge=verdict,
                vote_fraction=judgment.score or 0.0,
                tool=", ".join(dict.fromkeys(re.findall(r"^(\w[\w.-]*)\(", unit.output, re.M))),
                ask=unit.ask[:300],
                reasons=ref.reasons,
                judge_reasoning=_reasoning(judgment),
                findings=step_codes,
                cause=cause,
                evidence=evidence,
            )
        )
    return result


def counts_by(disagreements: Sequence[Disagreement], field: str) -> list[tuple[str, int]]:
    """How many disagreements each cause (or tool) has, most first; unset causes as ``unset``."""
    counted = Counter(getattr(d, field) or "unset" for d in disagreements)
    return counted.most_common()


def _example_step(unit: JudgeInput) -> str:
    text = unit.unit_text()
    return text if len(text) <= EXAMPLE_CHARS else f"{text[: EXAMPLE_CHARS - 1]}…"


def examples_spec(
    parent: JudgeSpec,
    label_set: LabelSet,
    found: Sequence[Disagreement],
    units: dict[str, JudgeInput],
    k: int,
) -> JudgeSpec:
    """``parent`` with ``k`` dev disagreements as worked examples, balanced by the people's
    label (alternating while both last), each with the people's label and reason."""
    require_dev(label_set, (d.item_id for d in found))
    by_label: dict[str, list[Disagreement]] = {"incorrect": [], "correct": []}
    for disagreement in found:
        by_label[disagreement.people].append(disagreement)
    chosen: list[Disagreement] = []
    while len(chosen) < k and any(by_label.values()):
        for label in ("incorrect", "correct"):
            if by_label[label] and len(chosen) < k:
                chosen.append(by_label[label].pop(0))
    examples = [
        JudgeExample(
            step=_example_step(units[d.item_id]),
            label="correct" if d.people == "correct" else "incorrect",
            reason="; ".join(reason.split(": ", 1)[-1] for reason in d.reasons),
            item_id=d.item_id,
        )
        for d in chosen
    ]
    return parent.with_changes(
        name=f"{parent.name}+examples{len(examples)}",
        examples=[*parent.examples, *examples],
        parent=parent.judge_id,
    )


class Amendment(BaseModel):
    """What the proposing model answers: explicit rules to add to the rubric."""

    rules: list[str] = Field(min_length=1, max_length=12)
    summary: str


PROPOSER_SYSTEM = """You improve the rubric of an LLM judge that grades a coding agent's tool
choices. You are shown the rubric and the steps where the judge and people disagreed, with
the people's reasons and the judge's reasoning. Write a short list of explicit rules to add to
the rubric, each one sentence that names the situation and the verdict (for example: "A
search for a symbol in local files done with grep through Bash, when a Grep tool is on the
menu, is incorrect."). Write rules that generalise; never name one session or one step. Then
call record_amendment."""
AMENDMENT_TOOL = tool_for(Amendment, "record_amendment", "Record the rules to add.")


def proposal_request(
    parent: JudgeSpec, label_set: LabelSet, found: Sequence[Disagreement]
) -> StructuredRequest:
    """The request asking a model for a rubric amendment from the dev disagreements."""
    require_dev(label_set, (d.item_id for d in found))
    shown = "\n\n".join(
        f"### Step {number}\nRequest: {d.ask}\nCalled: {d.tool}\n"
        f"People said: {d.people} ({'; '.join(d.reasons) or 'no reason given'})\n"
        f"The judge said: {d.judge} ({d.judge_reasoning[:600]})"
        for number, d in enumerate(found, start=1)
    )
    prompt = f"## The rubric\n{parent.rubric}\n\n## Where the judge and people disagree\n{shown}"
    return StructuredRequest(system=PROPOSER_SYSTEM, prompt=prompt, tool=AMENDMENT_TOOL)


def amended_spec(parent: JudgeSpec, amendment: Amendment) -> JudgeSpec:
    """``parent`` with the amendment's rules added to its rubric."""
    rules = "\n".join(f"- {rule.strip()}" for rule in amendment.rules if rule.strip())
    rubric = f"{parent.rubric}\n\nRules from people's corrections:\n{rules}"
    return parent.with_changes(name=f"{parent.name}+amended", rubric=rubric, parent=parent.judge_id)


def spec_diff(parent: JudgeSpec, child: JudgeSpec, parent_name: str, child_name: str) -> str:
    """The child spec's file against its parent's, as a unified diff."""
    from analysis.judge import spec_toml

    return "".join(
        difflib.unified_diff(
            spec_toml(parent).splitlines(keepends=True),
            spec_toml(child).splitlines(keepends=True),
            parent_name,
            child_name,
        )
    )


def parse_amendment(data: dict[str, Any]) -> Amendment | None:
    try:
        return Amendment.model_validate(data)
    except ValueError:
        return None
