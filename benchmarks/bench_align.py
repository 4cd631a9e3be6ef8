"""The alignment loop from the vote cache: labelled steps, three judge specs, every vote cached.

Builds sessions of ``--turns`` two-step turns (a Read, then grep through Bash or Grep), labels
every step, and runs ``analysis.align.run_align`` with three specs: once against a loopback
judge (the tests' fake Anthropic server) to fill the vote cache, then again, timed, with every
vote read from the cache. Prints the time per spec and its ratio to the baseline of rendering
the labelled steps once (what any measurement of them must do), at 1/4, 1/2 and all of
``--steps``, so the growth with size shows. Each time is the best of ``--repeat`` runs.

    python benchmarks/bench_align.py [--steps 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fake_anthropic import API_KEY, FakeAnthropic  # noqa: E402

from analysis.align import Judging, label_set, labelled_steps, render_items, run_align  # noqa: E402
from analysis.judge import JudgeSpec, default_spec  # noqa: E402
from analysis.models import AssistantMessage, Session, ToolCall, Turn, step_item_id  # noqa: E402
from analysis.study import LabelStore, StepLabel  # noqa: E402


def sessions_and_labels(steps: int) -> tuple[list[Session], list[StepLabel]]:
    sessions, labels = [], []
    for number in range(steps // 4):
        turns = []
        for t in range(2):
            grep_in_bash = (number + t) % 3 == 0
            second = (
                ToolCall(id=f"b{number}{t}", name="Bash", input={"command": "grep -rn x src"})
                if grep_in_bash
                else ToolCall(id=f"g{number}{t}", name="Grep", input={"pattern": "x"})
            )
            read = ToolCall(id=f"r{number}{t}", name="Read", input={"file_path": f"src/m{t}.py"})
            messages = [
                AssistantMessage(id=f"m{number}-{t}-0", text="", tool_calls=[read]),
                AssistantMessage(id=f"m{number}-{t}-1", text="", tool_calls=[second]),
            ]
            ask = f"find where x is used in module {t}"
            turns.append(Turn(index=t, ask=ask, messages=messages))
            for step, wrong in ((0, False), (1, grep_in_bash)):
                item = step_item_id(f"s{number:05d}", t, step)
                value = "incorrect" if wrong else "correct"
                labels.append(StepLabel(item_id=item, labeller="alice", value=value))
        sessions.append(
            Session(session_id=f"s{number:05d}", source="bench", format="claude-code", turns=turns)
        )
    return sessions, labels


def best(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tsq-bench-align-"))
    with FakeAnthropic() as fake:
        base = default_spec("claude-judge-4-5").with_changes(base_url=fake.url)
        specs = [
            base,
            base.with_changes(name="team", rubric=base.rubric + "\n- Prefer Grep to grep."),
            base.with_changes(name="five-votes", votes=5),
        ]
        settings = {"api_key": API_KEY, "cache_dir": work / "cache", "concurrency": 16}
        print(f"{'steps':>6} {'baseline s':>11} {'per spec s':>11} {'ratio':>7}")
        for size in (args.steps // 4, args.steps // 2, args.steps):
            measure(size, specs, settings, work, args.repeat, fake)


def measure(
    size: int,
    specs: list[JudgeSpec],
    settings: dict[str, object],
    work: Path,
    repeat: int,
    fake: FakeAnthropic,
) -> None:
    """One row: the loop per spec from the vote cache, and the rendering baseline."""
    sessions, labels = sessions_and_labels(size)
    store = LabelStore(work / f"labels-{size}.sqlite")
    store.save_step_labels(labels)
    labelled = label_set(store)

    def loop() -> None:
        run_align(sessions, labelled, specs, Judging(settings=settings))

    loop()  # fills the vote cache
    asked = len(fake.script.messages)
    per_spec = best(repeat, loop) / len(specs)
    assert len(fake.script.messages) == asked, "the timed runs asked the judge again"
    steps = labelled_steps(sessions, labelled)
    baseline = best(repeat, lambda: render_items(steps, list(steps), specs[0]))
    ratio = per_spec / baseline
    print(f"{len(labels):>6} {baseline:>11.3f} {per_spec:>11.3f} {ratio:>7.1f}")


if __name__ == "__main__":
    main()
