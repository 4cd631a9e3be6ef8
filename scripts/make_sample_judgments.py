"""Write ``sample_data/judgments/illustrative.judgments.jsonl``: ILLUSTRATIVE judge output.

No model produced these votes. They are written by hand-made rules that follow the product
brief's story, so the app has something true to show offline: one judgment per step (each
model response of the main agent that called a tool), under each condition. Under ``bare``
every step passes (a menu of one), under ``catalog_no_call`` every step fails (no call in the
output), under ``full`` only the right choices pass, and one step has a split vote.

    python scripts/make_sample_judgments.py
"""

from __future__ import annotations

from pathlib import Path

import analysis
from analysis.judge import DEFAULT_SPEC_NAME, judgment
from analysis.models import Judgment, Vote
from analysis.render import CONDITIONS, JudgeInput, render_step, turn_steps

OUT = Path(__file__).resolve().parents[1] / "sample_data" / "judgments"
MODEL = "illustrative (not a live model)"
BAD = "5eed0000-0000-4000-8000-000000000001"
RICH = "5eed0000-0000-4000-8000-000000000002"
WRONG_CHOICES = {(BAD, 1, 0), (BAD, 2, 0), (BAD, 3, 0)}  # WebSearch, Read-to-delete, WebSearch
SPLIT = {(RICH, 3, 0): ("correct", "correct", "incorrect")}  # "yes do #1"
REASONS = {
    "bare": "The menu held only what was called ({tools}): the only possible choice.",
    "catalog_no_call": "Tools were available but the output shows no call: the agent did not act.",
    "correct": "{tools} can do what was asked, and no better tool was on the menu.",
    "incorrect": "{tools} cannot do what was asked; a local tool on the menu (Bash, Glob) could.",
}


def votes_for(rendered: JudgeInput, called: str) -> list[Vote]:
    key = (rendered.session_id, rendered.turn_index, rendered.step_index)
    if rendered.condition == "bare":
        verdicts = ("correct",) * 3
    elif rendered.condition == "catalog_no_call":
        verdicts = ("incorrect",) * 3
    elif key in SPLIT:
        verdicts = SPLIT[key]
    else:
        verdicts = ("incorrect" if key in WRONG_CHOICES else "correct",) * 3
    reason_key = rendered.condition if rendered.condition != "full" else None
    return [
        Vote(verdict=v, reasoning=REASONS[reason_key or v].format(tools=called)) for v in verdicts
    ]


def main() -> None:
    loaded = analysis.load([analysis.sample_data_dir() / "transcripts"])
    lines: list[Judgment] = []
    for session in loaded.sessions:
        for turn in session.turns:
            for step in turn_steps(turn):
                called = ", ".join(dict.fromkeys(c.name for c in step.message.tool_calls))
                for condition in CONDITIONS:
                    rendered = render_step(session, turn, step.index, condition)
                    result = judgment(rendered, votes_for(rendered, called), 3, MODEL, None)
                    lines.append(
                        result.model_copy(
                            update={
                                "step_index": rendered.step_index,
                                "message_id": rendered.message_id,
                                "parent_call_id": rendered.parent_call_id,
                                "spec_name": DEFAULT_SPEC_NAME,
                            }
                        )
                    )
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "illustrative.judgments.jsonl"
    path.write_text("".join(line.model_dump_json() + "\n" for line in lines))
    print(f"wrote {len(lines)} illustrative judgments to {path}")


if __name__ == "__main__":
    main()
