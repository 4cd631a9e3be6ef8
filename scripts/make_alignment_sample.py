"""Write ``sample_data/alignment/``: a SYNTHETIC label set for the judge-alignment loop.

No person labelled these steps and no model judged them. Thirty short Claude Code sessions
make the choices a team argues about (grep through Bash where the Grep tool is on the menu;
a web search for a library's docs; a web search for the local branch), two labellers label
their steps by hand-made rules (the second labels a third of them, disagreeing twice), and
two judge specs "judge" them by hand-made rules: the built-in one passes grep through Bash,
the amended one, whose rubric states the team's rule, catches it. It exists so the workbench
shows the whole loop (``tsq align``, the Agreement page) with no network and no key.

    python scripts/make_alignment_sample.py
"""

from __future__ import annotations

import csv
import json
import uuid
from pathlib import Path

import analysis
from analysis.judge import default_spec, judgment, spec_toml
from analysis.models import Vote
from analysis.render import render_step, turn_steps

OUT = Path(__file__).resolve().parents[1] / "sample_data" / "alignment"
MODEL = "illustrative (not a live model)"
RULE = (
    "Searching local file contents with grep or rg through the Bash tool, when the Grep tool "
    "is on the menu, is incorrect."
)
# (ask, tool, input, people's label, reason): the kinds of step the sessions are made of.
KINDS = {
    "grep_tool": (
        "Where is parse_config defined?",
        "Grep",
        {"pattern": "def parse_config"},
        "correct",
        "",
    ),
    "grep_bash": (
        "Find every call of retry_payment",
        "Bash",
        {"command": "grep -rn retry_payment src"},
        "incorrect",
        "Use the Grep tool, not grep in Bash.",
    ),
    "read": ("Show me src/app.py", "Read", {"file_path": "src/app.py"}, "correct", ""),
    "docs": (
        "How do I use polars' pivot?",
        "WebSearch",
        {"query": "polars DataFrame.pivot"},
        "correct",
        "A web search for a library's docs is fine.",
    ),
    "branch_web": (
        "Which git branch is this repo on?",
        "WebSearch",
        {"query": "how to see current git branch"},
        "incorrect",
        "A web search cannot see this repository: Bash runs git.",
    ),
    "count": (
        "How many test files are there?",
        "Glob",
        {"pattern": "tests/**/test_*.py"},
        "correct",
        "",
    ),
}
PLAN = ["grep_tool", "grep_bash", "read", "docs", "branch_web", "count"]
SECOND_LABELLER_DISAGREES = {3, 17}  # sessions where bob's label differs from alice's


def _id(*parts: object) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "tsq-alignment/" + "/".join(map(str, parts))))


def session_records(number: int) -> tuple[str, list[dict[str, object]], list[str]]:
    session = _id("session", number)
    kinds = [PLAN[number % len(PLAN)], PLAN[(number * 5 + 1) % len(PLAN)]]
    records: list[dict[str, object]] = []
    parent = None
    for turn, kind in enumerate(kinds):
        ask, tool, arguments, _, _ = KINDS[kind]
        stamp = f"2026-05-{1 + number % 28:02d}T10:{turn:02d}:00.000Z"
        base = {
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/shop",
            "sessionId": session,
            "version": "2.1.39",
            "gitBranch": "main",
            "timestamp": stamp,
        }
        user_id, reply_id, result_id = (_id(session, turn, k) for k in ("u", "a", "r"))
        call = f"toolu_{number:02d}{turn}"
        records.append(
            {
                **base,
                "parentUuid": parent,
                "type": "user",
                "uuid": user_id,
                "message": {"role": "user", "content": ask},
            }
        )
        records.append(
            {
                **base,
                "parentUuid": user_id,
                "type": "assistant",
                "uuid": reply_id,
                "message": {
                    "model": "claude-opus-4-6",
                    "id": f"msg_{session[:8]}{turn}",
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": call, "name": tool, "input": arguments}],
                    "usage": {"input_tokens": 3, "output_tokens": 7},
                },
            }
        )
        records.append(
            {
                **base,
                "parentUuid": reply_id,
                "type": "user",
                "uuid": result_id,
                "message": {
                    "role": "user",
                    "content": [{"tool_use_id": call, "type": "tool_result", "content": "ok"}],
                },
            }
        )
        parent = result_id
    return session, records, kinds


def label_rows(number: int, session: str, kinds: list[str]) -> list[dict[str, object]]:
    rows = []
    for turn, kind in enumerate(kinds):
        value, reason = KINDS[kind][3], KINDS[kind][4]
        step = {"session_id": session, "turn_index": turn, "step_index": 0}
        rows.append({**step, "value": value, "reason": reason, "labeller": "alice"})
        if number % 3 == 0:
            other = value
            if number in SECOND_LABELLER_DISAGREES and turn == 0:
                other = "correct" if value == "incorrect" else "incorrect"
            rows.append({**step, "value": other, "reason": "", "labeller": "bob"})
    return rows


def verdict(kind: str, amended: bool) -> str:
    if kind == "branch_web":
        return "incorrect"
    if kind == "grep_bash":
        return "incorrect" if amended else "correct"
    return "correct"


def main() -> None:
    base = default_spec()
    amended = base.with_changes(
        name="tsq-rubric/3+team-rules",
        rubric=f"{base.rubric}\n\nRules from people's corrections:\n- {RULE}",
        parent=base.judge_id,
    )
    (OUT / "transcripts").mkdir(parents=True, exist_ok=True)
    (OUT / "specs").mkdir(exist_ok=True)
    (OUT / "judgments").mkdir(exist_ok=True)
    (OUT / "specs" / "default.judge.toml").write_text(spec_toml(base))
    (OUT / "specs" / "team-rules.judge.toml").write_text(spec_toml(amended))
    labels, kinds_of = [], {}
    for number in range(30):
        session, records, kinds = session_records(number)
        kinds_of[session] = kinds
        path = OUT / "transcripts" / f"{session}.jsonl"
        path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
        labels += label_rows(number, session, kinds)
    with (OUT / "labels.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(labels[0]))
        writer.writeheader()
        writer.writerows(labels)
    loaded = analysis.load([OUT / "transcripts"])
    for spec, is_amended, name in ((base, False, "default"), (amended, True, "team-rules")):
        lines = []
        for session in loaded.sessions:
            for turn in session.turns:
                for step in turn_steps(turn):
                    unit = render_step(session, turn, step.index, "full")
                    said = verdict(kinds_of[session.session_id][turn.index], is_amended)
                    votes = [Vote(verdict=said, reasoning=f"By the rubric, {said}.")] * 3
                    made = judgment(unit, votes, 3, MODEL, None, spec.judge_id, spec.name)
                    lines.append(made.model_dump_json() + "\n")
        (OUT / "judgments" / f"{name}.judgments.jsonl").write_text("".join(lines))
    print(f"wrote {len(loaded.sessions)} sessions and {len(labels)} labels to {OUT}")


if __name__ == "__main__":
    main()
