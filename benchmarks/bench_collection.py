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
  index;
- ``tsq lint COLLECTION --json`` through the index;
- ``tsq report COLLECTION``, reading every file and through the index;
- the app (Streamlit's AppTest, in a process of its own, on the collection as a local folder):
  the Overview's first run (index built), a rerun, a filter, a session's Session and Turn
  pages, and the process's peak memory.

Prints each figure, its ratio to the baseline (reading every file) and to the figure measured
before the index on 10,000 sessions, and the goal at 10,000 sessions.

    python benchmarks/bench_collection.py [--sessions 1000] [--keep DIR] [--max-session-kb N]
        [--no-report-every-file]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ingest import REAL_CORPUS, _rewrite_ids

PROJECTS = 40
GOALS = {
    "first build": 60.0,
    "re-open, nothing changed": 2.0,
    "one file changed": 3.0,
    "tsq judge --dry-run": 20.0,
    "tsq lint (index)": 10.0,
    "app: Overview, first run": 5.0,
    "app: Overview, rerun": 1.0,
    "app: Overview, a filter": 1.0,
    "app: Session page": 1.0,
    "app: Turn page": 1.0,
}
BEFORE = {
    "tsq ingest (every file)": 52.5,
    "tsq ingest --index": 52.5,
    "tsq lint (index)": 66.7,
    "app: Overview, first run": 89.7,
    "app: Overview, rerun": 29.3,
    "app: Overview, a filter": 29.3,
    "tsq judge --dry-run": 238.0,
}
"""Seconds on 10,000 sessions before the index (the app's peak was 5.63 GB, lint's 3.60 GB,
the judge's dry run's 6.96 GB)."""
DRY_RUN_BEFORE_GB = 6.96
APP_PEAK_GOAL_GB = 1.5


def build_collection(
    folder: Path, sessions: int, source: Path = REAL_CORPUS, max_bytes: int | None = None
) -> int:
    """Write ``sessions`` sessions (with their subagent files) into ``folder``, copies of the
    real ones no larger than ``max_bytes`` (all, by default); return the bytes written."""
    mains = sorted(
        p
        for p in source.rglob("*.jsonl")
        if p.parent.name != "subagents" and (max_bytes is None or p.stat().st_size <= max_bytes)
    )
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


def app_figures(folder: Path, cache: Path) -> tuple[list[tuple[str, float]], float]:
    """The app's timings on ``folder`` (its index already built in ``cache``), in a process of
    its own, and that process's peak memory (GB)."""
    done = subprocess.run(
        [sys.executable, __file__, "--app-child", str(folder)],
        env={**os.environ, "XDG_CACHE_HOME": str(cache)},
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return [(name, seconds) for name, seconds in figures["seconds"].items()], figures["peak_gb"]


def _app_child(folder: str) -> None:
    """Run in the child process: the pages as a person clicks through them."""
    import resource

    from streamlit.testing.v1 import AppTest

    app = Path(__file__).resolve().parents[1] / "app.py"
    seconds: dict[str, float] = {}

    def timed_run(name: str, step: Any) -> Any:
        start = time.perf_counter()
        result = step()
        seconds[name] = time.perf_counter() - start
        return result

    at = AppTest.from_file(str(app), default_timeout=600)
    at.session_state["kept_data_source"] = "Local folder"
    at.session_state["kept_data_folder"] = folder
    timed_run("app: Overview, first run", at.run)
    assert not at.exception, at.exception
    timed_run("app: Overview, rerun", at.run)
    timed_run("app: Overview, a filter", at.toggle(key="split_filter").set_value(True).run)
    at.toggle(key="split_filter").set_value(False).run()
    shown = at.dataframe[-1].value
    at.query_params["session"] = str(shown["session_id"].iloc[len(shown) // 2])
    timed_run("app: Session page", at.switch_page("pages/session.py").run)
    timed_run("app: Turn page", at.switch_page("pages/turn.py").run)
    assert not at.exception, at.exception
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
    print(json.dumps({"seconds": seconds, "peak_gb": peak}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="build the collection here and keep it")
    parser.add_argument(
        "--max-session-kb",
        type=int,
        help="copy only the real sessions of at most this size (smaller sessions, for 100,000)",
    )
    parser.add_argument(
        "--no-report-every-file",
        action="store_true",
        help="leave out tsq report --no-index (it holds every session: 5.84 GB at 10,000)",
    )
    parser.add_argument("--app-child", help=argparse.SUPPRESS)  # the app's own process
    args = parser.parse_args()
    if args.app_child:
        _app_child(args.app_child)
        return
    work = Path(tempfile.mkdtemp(prefix="tsq-bench-collection-"))
    folder = args.keep or work / "projects"
    cache = work / "cache"
    index = cache / "tsq-workbench" / "index.duckdb"  # the app's default index, in ``cache``
    index.parent.mkdir(parents=True)
    try:
        if not (args.keep and args.keep.is_dir()):
            cap = None if args.max_session_kb is None else args.max_session_kb * 1024
            size = build_collection(folder, args.sessions, max_bytes=cap)
        else:
            size = sum(p.stat().st_size for p in folder.rglob("*.jsonl"))
        print(f"{args.sessions:,} sessions, {size / 1e9:.2f} GB in {PROJECTS} project folders")
        baseline, baseline_gb = timed("ingest", str(folder), "--json", "--no-index")
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
        rows.append(
            ("tsq lint (index)", *timed("lint", str(folder), "--json", "--index", str(index)))
        )
        report = str(work / "report.html")
        if not args.no_report_every_file:
            rows.append(
                (
                    "tsq report (every file)",
                    *timed("report", str(folder), "--out", report, "--no-index"),
                )
            )
        rows.append(
            (
                "tsq report (index)",
                *timed("report", str(folder), "--out", report, "--index", str(index)),
            )
        )
        pages, peak = app_figures(folder, cache)
        rows += [(name, seconds, peak) for name, seconds in pages]
        print(
            f"{'':28} {'seconds':>8} {'peak GB':>8} {'/ files':>8} {'/ before':>9}  goal at 10,000"
        )
        for name, seconds, gigabytes in rows:
            goal = GOALS.get(name)
            before = BEFORE.get(name)
            print(
                f"{name:28} {seconds:8.2f} {gigabytes:8.2f} {seconds / baseline:8.2f} "
                f"{'' if before is None else f'{seconds / before:9.3f}':>9}  "
                f"{'' if goal is None else f'≤ {goal:g} s'}"
            )
        print(
            f"tsq judge --dry-run's peak memory: {estimated[1]:.2f} GB (goal ≤ 1.5 GB, before "
            f"{DRY_RUN_BEFORE_GB} GB: {estimated[1] / DRY_RUN_BEFORE_GB:.3f} of it)"
        )
        print(
            f"the app's peak memory: {peak:.2f} GB (goal ≤ {APP_PEAK_GOAL_GB} GB, before 5.63 GB)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
