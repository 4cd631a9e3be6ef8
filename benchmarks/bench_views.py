"""How the workbench's views scale: 1,000 sessions x 100 turns, all judged.

Times diagnostics (once per load, cached by the app), the session overview and one session's
turn table (each rerun), against the baseline of building the plain turns frame of the same
sessions, and prints each as a ratio to that baseline.

    python benchmarks/bench_views.py [--sessions 1000] [--turns 100]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import analysis
from analysis._models import AssistantMessage, Session, ToolCall, Turn, TurnJudgment, Vote
from analysis._views import session_overview, turn_table


def workspace(sessions: int, turns: int) -> tuple[list[Session], list[TurnJudgment]]:
    built, judgments = [], []
    for s in range(sessions):
        session_turns = []
        for t in range(turns):
            call = ToolCall(id=f"c{s}-{t}", name="Read", input={"file_path": f"src/m{t}.py"})
            message = AssistantMessage(id=f"m{s}-{t}", text="Reading it.", tool_calls=[call])
            session_turns.append(
                Turn(index=t, ask=f"show me module {t} please", messages=[message])
            )
            votes = [
                Vote(verdict="correct" if (t + k) % 4 else "incorrect", reasoning="…")
                for k in range(3)
            ]
            judgments.append(
                TurnJudgment(
                    session_id=f"s{s}",
                    turn_index=t,
                    score=sum(v.verdict == "correct" for v in votes) / 3,
                    votes=votes,
                    n_requested=3,
                    n_valid=3,
                    n_discarded=0,
                    model="m",
                    rubric_version="r",
                    condition="full",
                    catalog_size=10,
                    call_rendered=True,
                    context_chars=0,
                )
            )
        built.append(
            Session(session_id=f"s{s}", source="bench", format="claude-code", turns=session_turns)
        )
    return built, judgments


def timed(work: Callable[[], Any]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=100)
    args = parser.parse_args()
    sessions, judgments = workspace(args.sessions, args.turns)
    baseline = timed(lambda: analysis.turns_frame(sessions))
    findings = analysis.lint(sessions, judgments)
    results = {
        "diagnostics (per load)": timed(lambda: analysis.lint(sessions, judgments)),
        "session overview (per rerun)": timed(
            lambda: session_overview(sessions, judgments, findings)
        ),
        "one session's turns (per rerun)": timed(
            lambda: turn_table(sessions[0], judgments, findings)
        ),
    }
    print(f"{len(sessions)} sessions, {len(judgments)} judged turns, {len(findings)} findings")
    print(f"baseline (turns frame): {baseline:.2f} s")
    for label, seconds in results.items():
        print(f"{label:34} {seconds:6.2f} s  ratio to baseline {seconds / baseline:5.2f}")


if __name__ == "__main__":
    main()
