"""The step scorer at the size of a team's collection: training on labelled steps, and scoring
every step through the index, as processes (start-up included) timed with ``/usr/bin/time``
for wall seconds and peak memory.

For each size in ``--sessions`` (a collection of real-shaped Claude Code sessions built as
``bench_collection.py`` builds it, or ``--collection DIR`` for the largest), the index is built
first (its time is shown, not counted); then ``--labelled-steps`` steps of the first sessions
are labelled by a stated rule (a step that runs grep, rg, find, cat, head, tail or ls through
Bash, which Claude Code's own Grep, Glob and Read tools do better, is incorrect) and

- ``tsq scorer train`` trains on them (the dev part; goal ≤ 60 s for 5,000 labelled steps);
- ``tsq score`` scores every main-agent step of the collection (goal at 10,000 sessions:
  ≤ 60 s and ≤ 1.5 GB), then again with every step scored before (all skipped);
- ``tsq ingest`` reads the collection through the index before and after scoring: the
  scorer's judgments in the index must not make opening a collection slower (the ratio);
- ``tsq judge --cascade --budget 5 --dry-run`` chooses the steps a cascade asks the judge
  about, before scoring (the scorer reads every step's features) and after (it reuses the
  probabilities ``tsq score`` kept): the ratio;
- ``tsq watch --by week --scorer`` and ``--by version`` on the scored collection.

Prints each figure and how scoring grows with the number of sessions (seconds per 1,000
sessions, and the ratio to the smallest size).

    python benchmarks/bench_scorer.py [--sessions 2000 10000] [--collection DIR]
        [--labelled-steps 5000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import duckdb

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "tests"))

from bench_collection import build_collection  # noqa: E402

from analysis.scorer import StepFeatures, feature_tokens  # noqa: E402

GOALS = {"train seconds": 60.0, "score seconds at 10,000": 60.0, "score GB at 10,000": 1.5}
DEDICATED = re.compile(r"^call:Bash:(?:grep|rg|egrep|find|cat|head|tail|ls)$")
"""The stated rule of the benchmark's labels: a step that runs, through Bash, a program one of
Claude Code's own tools does better (Grep, Glob, Read) is incorrect; every other is correct."""


def timed(*args: str, ok: tuple[int, ...] = (0,)) -> tuple[float, float, str]:
    """``tsq ARGS`` in a process: wall seconds, peak memory in GB, and its stdout (an exit
    status outside ``ok`` stops the benchmark)."""
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M", sys.executable, "-m", "analysis", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in ok:
        raise SystemExit(f"tsq {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    seconds, kilobytes = done.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(kilobytes) / 1024**2, done.stdout


def write_labels(index: Path, steps: int, out: Path) -> dict[str, int]:
    """Label the first ``steps`` main-agent steps of the index by :data:`DEDICATED`'s rule,
    as a step-label file; returns the counts."""
    with duckdb.connect(str(index), read_only=True) as conn:
        rows = conn.execute(
            "SELECT features FROM step_inputs WHERE features IS NOT NULL"
            " AND parent_call_id IS NULL ORDER BY source_file, position LIMIT ?",
            [steps],
        ).fetchall()
    counts = {"correct": 0, "incorrect": 0}
    with out.open("w", encoding="utf-8") as file:
        for (text,) in rows:
            step = StepFeatures.model_validate_json(text)
            wrong = any(DEDICATED.match(token) for token in feature_tokens(step))
            value = "incorrect" if wrong else "correct"
            counts[value] += 1
            row = {
                "session_id": step.session_id,
                "turn_index": step.turn_index,
                "step_index": step.step_index,
                "value": value,
                "labeller": "rules",
            }
            file.write(json.dumps(row) + "\n")
    return counts


def measure(folder: Path, work: Path, labelled: int) -> dict[str, Any]:
    index = work / "index.duckdb"
    built, built_gb, _ = timed("index", str(folder), "--index", str(index))
    labels = work / "labels.jsonl"
    counts = write_labels(index, labelled, labels)
    scorer = work / "scorer"
    train = timed(
        "scorer",
        "train",
        str(folder),
        "--labels",
        str(labels),
        "--index",
        str(index),
        "--out",
        str(scorer),
    )
    opened = timed("ingest", str(folder), "--index", str(index))
    cascade = ["judge", str(folder), "--cascade", str(scorer), "--budget", "5", "--dry-run"]
    cascade += ["--model", "claude-sonnet-4-5", "--index", str(index)]
    cold = timed(*cascade)
    first = timed("score", str(folder), "--scorer", str(scorer), "--index", str(index))
    again = timed("score", str(folder), "--scorer", str(scorer), "--index", str(index))
    reopened = timed("ingest", str(folder), "--index", str(index))
    warm = timed(*cascade)
    watched = {
        by: timed(
            "watch",
            str(folder),
            "--by",
            by,
            "--scorer",
            str(scorer),
            "--index",
            str(index),
            ok=(0, 1),
        )
        for by in ("week", "version")
    }
    return {
        "index": (built, built_gb),
        "labels": counts,
        "train": train[:2],
        "trained": train[2].splitlines()[0],
        "score": first[:2],
        "scored": first[2].strip(),
        "again": again[:2],
        "open": (opened[:2], reopened[:2]),
        "cascade": (cold[:2], warm[:2], warm[2].splitlines()[1]),
        "watch": {by: (found[0], found[1], found[2].strip()) for by, found in watched.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[2_000, 10_000])
    parser.add_argument(
        "--collection", type=Path, help="an existing collection for the largest size"
    )
    parser.add_argument("--labelled-steps", type=int, default=5_000)
    parser.add_argument("--keep", type=Path, help="build the collections here and keep them")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tsq-bench-scorer-"))
    results = {}
    for size in sorted(args.sessions):
        if args.collection is not None and size == max(args.sessions):
            folder = args.collection
        else:
            folder = (args.keep or work) / f"collection-{size}"
            if not folder.is_dir():
                build_collection(folder, size)
        place = work / f"run-{size}"
        place.mkdir()
        figures = results[size] = measure(folder, place, args.labelled_steps)
        print(f"\n{size:,} sessions")
        print(f"  index built in {figures['index'][0]:.1f} s (not counted)")
        print(f"  labelled steps: {figures['labels']}")
        print(f"  train: {figures['train'][0]:.1f} s, {figures['train'][1]:.2f} GB")
        print(f"    {figures['trained']}")
        print(f"  score: {figures['score'][0]:.1f} s, {figures['score'][1]:.2f} GB")
        print(f"    {figures['scored']}")
        print(f"  score again (all scored before): {figures['again'][0]:.1f} s")
        (before, before_gb), (after, after_gb) = figures["open"]
        print(
            f"  tsq ingest through the index: {before:.1f} s, {before_gb:.2f} GB before scoring; "
            f"{after:.1f} s, {after_gb:.2f} GB after ({after / before:.2f} times)"
        )
        (cold_s, cold_gb), (warm_s, warm_gb), chosen = figures["cascade"]
        print(
            f"  cascade --budget 5 --dry-run: {cold_s:.1f} s, {cold_gb:.2f} GB before scoring; "
            f"{warm_s:.1f} s, {warm_gb:.2f} GB after ({warm_s / cold_s:.2f} times)"
        )
        print(f"    {chosen}")
        for by, (seconds, gb, said) in figures["watch"].items():
            print(f"  watch --by {by}: {seconds:.1f} s, {gb:.2f} GB")
            print(f"    {said}")
    smallest = min(results)
    print("\nhow scoring grows")
    for size, figures in results.items():
        seconds = figures["score"][0]
        print(
            f"  {size:>7,} sessions: {seconds:6.1f} s, {seconds / size * 1000:.2f} s per 1,000 "
            f"sessions, {seconds / results[smallest]['score'][0]:.2f} times the {smallest:,}"
        )
    print(
        f"\ngoals: train ≤ {GOALS['train seconds']:.0f} s on 5,000 labelled steps; score at "
        f"10,000 sessions ≤ {GOALS['score seconds at 10,000']:.0f} s and "
        f"≤ {GOALS['score GB at 10,000']} GB"
    )


if __name__ == "__main__":
    main()
