"""Reading Codex rollouts at size: ``analysis.load`` against the floor of parsing every line.

Builds collections of Codex rollouts from the real ones in ``../shared/corpus/codex`` (each
copy's ids made new, laid out in day folders as ``~/.codex/sessions/YYYY/MM/DD`` is), at each
size of ``--sizes``, and times, best of ``--repeat`` runs in this process:

- parse floor: read each file and ``orjson.loads`` every line;
- load:        ``analysis.load`` of the folder (turns, steps, calls paired by ``call_id``).

Prints seconds, milliseconds a rollout, load's time over the floor's, and how each time grows
from one size to the next (2.0 for twice the rollouts is linear). Then, as processes, ``tsq
ingest --json`` through a new index on the largest collection, and again with nothing changed.

    python benchmarks/bench_codex.py [--sizes 1000,2000,4000] [--repeat 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ingest import _rewrite_ids, parse_floor

import analysis

CODEX_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "codex"
DAYS = 60


def build(folder: Path, rollouts: int) -> int:
    """``rollouts`` copies of the corpus rollouts under ``folder``; the bytes written."""
    originals = sorted(CODEX_CORPUS.rglob("rollout-*.jsonl"))
    if not originals:
        sys.exit(f"no Codex rollouts under {CODEX_CORPUS}")
    written = 0
    for number in range(rollouts):
        original = originals[number % len(originals)]
        day = folder / "2026" / f"{1 + number % DAYS // 28:02d}" / f"{1 + number % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        data = _rewrite_ids(original.read_bytes(), number)
        (day / _rewrite_ids(original.name.encode(), number).decode()).write_bytes(data)
        written += len(data)
    return written


def best(repeat: int, work: object) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,2000,4000")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="write the collections here and keep them")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="tsq-codex-bench-"))
    previous: tuple[float, float] | None = None
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            folder = root / f"sessions-{size}"
            megabytes = build(folder, size) / 1e6
            floor = best(args.repeat, lambda f=folder: parse_floor(f))
            load = best(args.repeat, lambda f=folder: analysis.load([f]))
            growth = (
                f", grew x{floor / previous[0]:.2f} (floor) x{load / previous[1]:.2f} (load)"
                if previous
                else ""
            )
            print(
                f"{size:>6} rollouts, {megabytes:,.0f} MB: floor {floor:.2f} s, load {load:.2f} s "
                f"({1000 * load / size:.2f} ms a rollout), load / floor {load / floor:.2f}{growth}"
            )
            previous = (floor, load)
        index = root / "index.duckdb"
        tsq = [sys.executable, "-m", "analysis", "ingest", str(folder), "--json"]
        for label in ("first build", "nothing changed"):
            start = time.perf_counter()
            subprocess.run(
                [*tsq, "--index", str(index)], check=True, capture_output=True, text=True
            )
            print(f"tsq ingest --json --index, {label}: {time.perf_counter() - start:.2f} s")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
