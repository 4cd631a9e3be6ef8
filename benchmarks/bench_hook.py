"""What Claude Code waits for at each session start: the SessionStart hook's wall time.

Runs ``python -m analysis.claude.hook`` as Claude Code does (the hook's JSON on stdin) against
a fake HOME with user and project MCP settings and a registry that grows with each run, and
prints the median and worst time against a bare ``python -c pass`` (the interpreter's own
start), the ratio between them, and how the time grows with the registry's length. The goal
is 50 ms on the reference machine.

    python benchmarks/bench_hook.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRANSCRIPT = (
    Path(__file__).resolve().parents[2]
    / "shared/corpus/claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)


def timed(command: list[str], stdin: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, input=stdin, env=env, text=True, check=True, capture_output=True)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        home, project = Path(folder) / "home", Path(folder) / "project"
        (home / ".claude").mkdir(parents=True)
        project.mkdir()
        (home / ".claude.json").write_text(json.dumps({"mcpServers": {"memory": {}}}))
        (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"github": {}}}))
        env = os.environ | {"HOME": str(home), "TSQ_DATA_DIR": str(Path(folder) / "data")}
        stdin = json.dumps(
            {
                "session_id": "s",
                "transcript_path": str(TRANSCRIPT),
                "cwd": str(project),
                "hook_event_name": "SessionStart",
                "source": "startup",
            }
        )
        bare = [timed([sys.executable, "-c", "pass"], "", env) for _ in range(runs)]
        hook = [
            timed([sys.executable, "-m", "analysis.claude.hook"], stdin, env) for _ in range(runs)
        ]
        later = [
            timed([sys.executable, "-m", "analysis.claude.hook"], stdin, env) for _ in range(runs)
        ]
    median, bare_median = statistics.median(hook), statistics.median(bare)
    print(f"python -c pass     median {bare_median:6.1f} ms")
    print(f"SessionStart hook  median {median:6.1f} ms, worst {max(hook):6.1f} ms (goal 50 ms)")
    print(f"ratio hook / bare interpreter: {median / bare_median:.2f}")
    print(
        f"with {runs} to {2 * runs} registry lines: median {statistics.median(later):6.1f} ms "
        f"(x{statistics.median(later) / median:.2f}: the hook appends, it does not read)"
    )


if __name__ == "__main__":
    main()
