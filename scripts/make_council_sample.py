"""Write the synthetic council-vs-human study in ``sample_data/council_vs_human/``.

450 sessions labelled on four fields by a council (three stage-1 judges and a chairman) and by
human raters, with the adjudications that reconciled their disagreements. The counts are
chosen to reproduce the published study's headline figures (450 sessions, 61 human- and 280
AI-adjudicated, looped 100% raw agreement, tool_policy 48% raw and 95% after reconciliation,
66.6% aggregate raw agreement); every individual label is made up. Deterministic: running it
again rewrites the same bytes.

    python scripts/make_council_sample.py
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from make_sample_data import Transcript, text, tool_use

ROOT = Path(__file__).resolve().parents[1] / "sample_data" / "council_vs_human"
SEED = 20260504
ITEMS = 450
FIELDS = ("task_completed", "efficiency_bucket", "tool_policy", "looped")
STAGE1 = ("claude-sonnet-4-5", "gpt-4o", "gemini-2.5-pro")
CHAIRMAN = "claude-opus-4-1"
HUMANS = ("human:ana", "human:ben", "human:chen")
HUMAN_ADJUDICATOR = "human:dana"
AI_ADJUDICATOR = "claude-opus-4-1-adjudicator"
HUMAN_ADJUDICATED_SESSIONS = 61
VOCABULARY = {
    "task_completed": ("not_completed", "partially_completed", "completed"),
    "efficiency_bucket": ("efficient", "slightly_over", "wasteful"),
    "tool_policy": ("appropriate_use", "unnecessary_use", "insufficient_use"),
    "looped": ("no", "yes"),
}


@dataclass(frozen=True)
class Pattern:
    """One kind of disagreement: the two labels, its cause, who wins and how often."""

    human: str
    council: str
    cause: str
    winner: str  # the side an adjudicator following the rules chooses
    count: int


# Disagreements per field; the counts fix each field's raw agreement (450 minus their sum).
PATTERNS = {
    "task_completed": [
        Pattern("completed", "partially_completed", "severity_shift", "human", 125),
        Pattern("completed", "not_completed", "definition_mismatch", "human", 15),
        Pattern("partially_completed", "completed", "severity_shift", "council", 20),
    ],
    "efficiency_bucket": [
        Pattern("wasteful", "slightly_over", "schema_gap", "council", 110),
        Pattern("efficient", "slightly_over", "severity_shift", "council", 55),
        Pattern("efficient", "wasteful", "definition_mismatch", "council", 27),
        Pattern("wasteful", "efficient", "human_error", "council", 15),
    ],
    "tool_policy": [
        Pattern("appropriate_use", "unnecessary_use", "definition_mismatch", "human", 200),
        # Two or more redundant calls are visible: the council's flag stands.
        Pattern("appropriate_use", "unnecessary_use", "human_error", "council", 18),
        # Outside the rule (the human did not say appropriate_use): decided case by case.
        Pattern("unnecessary_use", "appropriate_use", "definition_mismatch", "human", 12),
        Pattern("insufficient_use", "appropriate_use", "human_error", "council", 4),
    ],
    "looped": [],
}
AGREED_WEIGHTS = {
    "task_completed": (15, 25, 60),
    "efficiency_bucket": (65, 0, 35),
    "tool_policy": (80, 12, 8),
    "looped": (93, 7),
}
# Where the AI adjudicator departs from the efficiency rule and sides with the human.
AI_EFFICIENCY_DEPARTURES = 6
# task_completed disagreements left undecided (in sessions the AI adjudicated on another
# field, so the session counts hold) for trying the Adjudicate page.
LEFT_OPEN = 8
TRANSCRIPTS_PER_KIND = 4


def item_ids() -> list[str]:
    return [f"cvh-{number:03d}" for number in range(1, ITEMS + 1)]


def disagreement_sets(rng: random.Random, items: list[str]) -> dict[str, list[str]]:
    """Which items disagree on which field: 341 items disagree somewhere, 109 nowhere."""
    sizes = {field: sum(p.count for p in patterns) for field, patterns in PATTERNS.items()}
    disagreeing = sorted(rng.sample(items, 341))
    order = disagreeing[:]
    rng.shuffle(order)
    tool_policy = order[: sizes["tool_policy"]]
    uncovered = order[sizes["tool_policy"] :]
    extra = sizes["efficiency_bucket"] - len(uncovered)
    efficiency = uncovered + rng.sample(tool_policy, extra)
    task = rng.sample(disagreeing, sizes["task_completed"])
    return {
        "task_completed": sorted(task),
        "efficiency_bucket": sorted(efficiency),
        "tool_policy": sorted(tool_policy),
        "looped": [],
    }


def stage1_label(rng: random.Random, field: str, chairman: str) -> str:
    """Stage-1 judges mostly say what the chairman says."""
    if field == "looped" or rng.random() < 0.8:
        return chairman
    return rng.choice([value for value in VOCABULARY[field] if value != chairman])


def redundant_for(rng: random.Random, pattern: Pattern | None) -> int:
    if pattern is not None and (pattern.human, pattern.winner) == ("appropriate_use", "council"):
        return rng.randint(2, 4)
    return 1 if rng.random() < 0.3 else 0


def main() -> None:  # noqa: C901 - one linear script
    rng = random.Random(SEED)
    items = item_ids()
    sets = disagreement_sets(rng, items)
    pattern_of: dict[tuple[str, str], Pattern] = {}
    for field, patterns in PATTERNS.items():
        assigned = sets[field][:]
        rng.shuffle(assigned)
        start = 0
        for pattern in patterns:
            for item in assigned[start : start + pattern.count]:
                pattern_of[item, field] = pattern
            start += pattern.count

    label_rows: list[list[str]] = []
    item_rows: list[list[str]] = []
    redundant: dict[str, int] = {}
    for item in items:
        human_rater = rng.choice(HUMANS)
        council: dict[str, str] = {}
        human: dict[str, str] = {}
        for field in FIELDS:
            pattern = pattern_of.get((item, field))
            if pattern is None:
                agreed = rng.choices(VOCABULARY[field], weights=AGREED_WEIGHTS[field])[0]
                human[field], council[field] = agreed, agreed
            else:
                human[field], council[field] = pattern.human, pattern.council
        for judge in STAGE1:
            row = [stage1_label(rng, field, council[field]) for field in FIELDS]
            label_rows.append([item, judge, "llm", *row])
        label_rows.append([item, CHAIRMAN, "council", *(council[f] for f in FIELDS)])
        label_rows.append([item, human_rater, "human", *(human[f] for f in FIELDS)])
        redundant[item] = redundant_for(rng, pattern_of.get((item, "tool_policy")))
        item_rows.append([item, str(redundant[item])])

    disagreeing = sorted({item for item, _ in pattern_of})
    by_human = set(disagreeing[:HUMAN_ADJUDICATED_SESSIONS])
    decision_rows: list[list[str]] = []
    clock = datetime(2026, 4, 6, 9, 0, 0)
    departures = 0
    left_open = leave_open(pattern_of, [item for item in disagreeing if item not in by_human])
    for item in disagreeing:
        for field in FIELDS:
            pattern = pattern_of.get((item, field))
            if pattern is None or (item, field) in left_open:
                continue
            side, note = pattern.winner, ""
            if item in by_human:
                who, kind = HUMAN_ADJUDICATOR, "human"
            else:
                who, kind = AI_ADJUDICATOR, "ai"
                departs = field == "efficiency_bucket" and pattern.cause == "definition_mismatch"
                if departs and departures < AI_EFFICIENCY_DEPARTURES:
                    side, departures = "human", departures + 1
                    note = "the retries were needed: the upstream API was down"
            value = pattern.human if side == "human" else pattern.council
            clock += timedelta(minutes=3)
            decision_rows.append(
                [item, field, who, kind, side, value, pattern.cause, note, clock.isoformat()]
            )

    ROOT.mkdir(parents=True, exist_ok=True)
    write_csv(ROOT / "labels.csv", ["item_id", "rater", "rater_kind", *FIELDS], label_rows)
    write_csv(ROOT / "items.csv", ["item_id", "redundant_calls"], item_rows)
    write_csv(
        ROOT / "adjudications.csv",
        [
            "item_id",
            "field",
            "adjudicator",
            "adjudicator_kind",
            "side",
            "value",
            "cause",
            "note",
            "decided_at",
        ],
        decision_rows,
    )
    write_transcripts(pattern_of, redundant)


def leave_open(
    pattern_of: dict[tuple[str, str], Pattern], by_ai: list[str]
) -> set[tuple[str, str]]:
    """The last ``LEFT_OPEN`` AI-adjudicated sessions' task_completed disagreements, among
    sessions that disagree on another field too."""
    candidates = [
        (item, "task_completed")
        for item in by_ai
        if (item, "task_completed") in pattern_of
        and any((item, field) in pattern_of for field in FIELDS if field != "task_completed")
    ]
    return set(candidates[-LEFT_OPEN:])


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def write_transcripts(
    pattern_of: dict[tuple[str, str], Pattern], redundant: dict[str, int]
) -> None:
    """A few sessions as Claude Code transcripts, so the rule can count repeated calls itself."""
    folder = ROOT / "transcripts"
    chosen: list[str] = []
    for wanted in ("human_error", "definition_mismatch"):
        matching = sorted(
            item
            for (item, field), pattern in pattern_of.items()
            if field == "tool_policy"
            and pattern.cause == wanted
            and pattern.human == "appropriate_use"
        )
        chosen += matching[:TRANSCRIPTS_PER_KIND]
    for item in chosen:
        session = Transcript(item)
        session.user("Why does the nightly export job fail? Check the log and the config.")
        calls = [("Read", {"file_path": "/srv/export/config.yaml"})]
        calls += [("Bash", {"command": "tail -n 50 /var/log/export.log"})]
        calls += [calls[1]] * redundant[item]  # the same call again, unchanged
        for number, (name, arguments) in enumerate(calls):
            call_id = f"toolu_{item.replace('-', '')}{number:02d}"
            session.assistant(tool_use(call_id, name, **arguments))
            session.result(call_id, "timeout: upstream did not answer within 30 s")
        session.assistant(text("The export times out waiting for the upstream API."))
        session.write(folder / f"{item}.jsonl")


if __name__ == "__main__":
    main()
