"""How big is what the judge reads? Rendered input size per judged unit, turn vs step.

Loads a folder of real transcripts (default: the shared corpus beside the repo), renders
every turn with a model response (``--unit turn``) and every step (``--unit step``, the
default), and prints the median and 95th-percentile size in characters of each unit's whole
input and of its part after the menu, with the step/turn ratio. Also the time to render all
steps against the time to render all turns.

    python benchmarks/bench_render.py [FOLDER] [--subagents]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import analysis

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "claude-code"


def percentile(values: list[int], share: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def sizes(units: list[analysis.JudgeInput]) -> tuple[list[int], list[int]]:
    return [len(u.prompt_text()) for u in units], [len(u.unit_text()) for u in units]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(DEFAULT_CORPUS))
    parser.add_argument("--subagents", action="store_true", help="Count subagents' steps too.")
    arguments = parser.parse_args()
    sessions = analysis.load([arguments.folder]).sessions
    started = time.perf_counter()
    turns = analysis.judge_inputs(sessions, "turn")
    turn_seconds = time.perf_counter() - started
    started = time.perf_counter()
    steps = analysis.judge_inputs(sessions, "step", subagents=arguments.subagents)
    step_seconds = time.perf_counter() - started
    print(f"{len(sessions)} sessions: {len(turns)} judged turns, {len(steps)} judged steps")
    print(f"{'unit':<6}{'part':<16}{'median':>10}{'p95':>10}{'max':>10}")
    medians = {}
    for name, units in (("turn", turns), ("step", steps)):
        whole, after_menu = sizes(units)
        for part, values in (("whole input", whole), ("after the menu", after_menu)):
            medians[(name, part)] = statistics.median(values)
            print(
                f"{name:<6}{part:<16}{statistics.median(values):>10,.0f}"
                f"{percentile(values, 0.95):>10,.0f}{max(values):>10,}"
            )
    for part in ("whole input", "after the menu"):
        ratio = medians[("step", part)] / medians[("turn", part)]
        print(f"median step / median turn ({part}): {ratio:.2f}")
    print(
        f"render time: turns {turn_seconds:.3f} s, steps {step_seconds:.3f} s "
        f"(ratio steps / turns {step_seconds / turn_seconds:.1f})"
    )


if __name__ == "__main__":
    main()
