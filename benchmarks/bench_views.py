"""How the workbench's views scale: 1,000 sessions x 100 turns, every step judged.

Each turn holds ``--steps`` tool-calling responses, each judged (step-level judgments, as
``tsq judge`` writes them). Times diagnostics (once per load, cached by the app), the session
overview and one session's turn table (each rerun), against the baseline of building the plain
turns frame of the same sessions, and prints each as a ratio to that baseline. Each time is the
best of ``--repeat`` runs: the machine's other work only ever adds time.

    python benchmarks/bench_views.py [--sessions 1000] [--turns 100] [--steps 1] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

import analysis
from analysis.models import AssistantMessage, Judgment, Session, ToolCall, Turn, Vote
from analysis.views import session_overview, turn_table


def workspace(sessions: int, turns: int, steps: int = 1) -> tuple[list[Session], list[Judgment]]:
    built, judgments = [], []
    for s in range(sessions):
        session_turns = []
        for t in range(turns):
            messages = []
            for step in range(steps):
                call = ToolCall(
                    id=f"c{s}-{t}-{step}", name="Read", input={"file_path": f"src/m{t}.py"}
                )
                messages.append(
                    AssistantMessage(id=f"m{s}-{t}-{step}", text="Reading it.", tool_calls=[call])
                )
                votes = [
                    Vote(verdict="correct" if (t + step + k) % 4 else "incorrect", reasoning="…")
                    for k in range(3)
                ]
                judgments.append(step_judgment(f"s{s}", t, step, messages[-1].id, votes))
            session_turns.append(Turn(index=t, ask=f"show me module {t} please", messages=messages))
        built.append(
            Session(session_id=f"s{s}", source="bench", format="claude-code", turns=session_turns)
        )
    return built, judgments


def step_judgment(
    session_id: str, turn_index: int, step_index: int, message_id: str, votes: list[Vote]
) -> Judgment:
    return Judgment(
        session_id=session_id,
        turn_index=turn_index,
        step_index=step_index,
        message_id=message_id,
        score=sum(v.verdict == "correct" for v in votes) / len(votes),
        votes=votes,
        n_requested=3,
        n_valid=len(votes),
        n_discarded=3 - len(votes),
        model="m",
        spec_name="r",
        condition="full",
        catalog_size=10,
        call_rendered=True,
        context_chars=0,
    )


def timed(work: Callable[[], Any], repeat: int) -> float:
    """The best of ``repeat`` runs, each after a garbage collection."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--steps", type=int, default=1, help="tool-calling responses per turn")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sessions, judgments = workspace(args.sessions, args.turns, args.steps)
    baseline = timed(lambda: analysis.turns_frame(sessions), args.repeat)
    findings = analysis.collect_findings(sessions, judgments)
    results = {
        "findings (per load)": timed(
            lambda: analysis.collect_findings(sessions, judgments), args.repeat
        ),
        "session overview (per rerun)": timed(
            lambda: session_overview(sessions, judgments, findings), args.repeat
        ),
        "one session's turns (per rerun)": timed(
            lambda: turn_table(sessions[0], judgments, findings), args.repeat
        ),
    }
    print(f"{len(sessions)} sessions, {len(judgments)} judged steps, {len(findings)} findings")
    print(f"baseline (turns frame): {baseline:.2f} s")
    for label, seconds in results.items():
        print(f"{label:34} {seconds:6.2f} s  ratio to baseline {seconds / baseline:5.2f}")


if __name__ == "__main__":
    main()
