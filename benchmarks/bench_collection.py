"""A collection of real-shaped sessions through the on-disk index, against reading every file.

Builds ``--sessions`` Claude Code sessions from the real ones in ``../shared/corpus/claude-code``
(each copy's session, record, message and call ids made new, subagent files included) in 40
project folders, the way ``~/.claude/projects`` looks after months of use. Then, as processes
(start-up and imports included), timed with ``/usr/bin/time`` for wall seconds and peak memory:

- ``tsq ingest COLLECTION --json``: reading every file (the baseline);
- ``tsq index COLLECTION``: the first build, then re-opening with nothing changed, then with one
  file changed;
- ``tsq ingest COLLECTION --json --index``: the same report read through the index;
- ``tsq judge COLLECTION --dry-run --index``: the judge's estimate of every step, through the
  index, beside the issue's figure for reading and rendering every file (238 s, 6.96 GB).

Prints each figure, its ratio to the baseline and, for the goals of the collection-scale work
(first build ≤ 60 s, re-open ≤ 2 s, one change ≤ 3 s, a judge dry run ≤ 20 s, all at 10,000
sessions), whether it is met.

    python benchmarks/bench_collection.py [--sessions 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ingest import REAL_CORPUS, _rewrite_ids

PROJECTS = 40
GOALS = {
    "first build": 60.0,
    "re-open, nothing changed": 2.0,
    "one file changed": 3.0,
    "tsq judge --dry-run": 20.0,
}
DRY_RUN_BEFORE = (238.0, 6.96)
"""``tsq judge --dry-run`` of 10,000 sessions reading every file: seconds, peak GB."""


def build_collection(folder: Path, sessions: int, source: Path = REAL_CORPUS) -> int:
    """Write ``sessions`` sessions (with their subagent files) into ``folder``; return bytes."""
    mains = sorted(p for p in source.rglob("*.jsonl") if p.parent.name != "subagents")
    written = 0
    for number in range(sessions):
        main = mains[number % len(mains)]
        project = folder / f"-home-dev-project-{number % PROJECTS:02d}"
        files = [main, *sorted(main.with_suffix("").glob("subagents/agent-*.jsonl"))]
        for file in files:
            relative = file.relative_to(main.parent)  # named anew: a session of its own
            target = (
                project / f"{number:06d}-{_rewrite_ids(str(relative).encode(), number).decode()}"
            )
            target.parent.mkdir(parents=True, exist_ok=True)
            data = _rewrite_ids(file.read_bytes(), number)
            target.write_bytes(data)
            written += len(data)
    return written


def _tsq() -> list[str]:
    script = Path(sys.executable).with_name("tsq")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "analysis"]


def timed(*args: str) -> tuple[float, float]:
    """Wall seconds and peak resident memory (GB) of one ``tsq`` process."""
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M", *_tsq(), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    seconds, kilobytes = done.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(kilobytes) / 1024 / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="build the collection here and keep it")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tsq-bench-collection-"))
    folder = args.keep or work / "projects"
    try:
        size = build_collection(folder, args.sessions)
        index = work / "index.duckdb"
        print(f"{args.sessions:,} sessions, {size / 1e9:.2f} GB in {PROJECTS} project folders")
        baseline, baseline_gb = timed("ingest", str(folder), "--json")
        rows = [("tsq ingest (every file)", baseline, baseline_gb)]
        rows.append(("first build", *timed("index", str(folder), "--index", str(index))))
        rows.append(
            ("re-open, nothing changed", *timed("index", str(folder), "--index", str(index)))
        )
        changed = next(folder.rglob("*.jsonl"))
        with changed.open("ab") as handle:  # a live session that grew by one record
            handle.write(changed.read_bytes().splitlines(keepends=True)[-1])
        rows.append(("one file changed", *timed("index", str(folder), "--index", str(index))))
        rows.append(
            ("tsq ingest --index", *timed("ingest", str(folder), "--json", "--index", str(index)))
        )
        dry_run = ("judge", str(folder), "--model", "claude-sonnet-4-5", "--dry-run")
        estimated = timed(*dry_run, "--index", str(index))
        rows.append(("tsq judge --dry-run", *estimated))
        print(f"{'':28} {'seconds':>8} {'peak GB':>8} {'/ baseline':>10}  goal at 10,000")
        for name, seconds, gigabytes in rows:
            goal = GOALS.get(name)
            verdict = "" if goal is None else f"≤ {goal:g} s"
            print(
                f"{name:28} {seconds:8.2f} {gigabytes:8.2f} {seconds / baseline:10.2f}  {verdict}"
            )
        seconds, gigabytes = estimated
        print(
            f"tsq judge --dry-run through the index / reading every file at 10,000 sessions "
            f"({DRY_RUN_BEFORE[0]:g} s, {DRY_RUN_BEFORE[1]:g} GB): "
            f"{seconds / DRY_RUN_BEFORE[0]:.3f} of the time, {gigabytes / DRY_RUN_BEFORE[1]:.3f} "
            "of the memory (goal ≤ 20 s, ≤ 1.5 GB)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
