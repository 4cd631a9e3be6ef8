"""Ingestion speed against the floor of merely parsing every line with orjson.

The corpus (about 120 MB by default) is, where ``../shared/corpus`` is beside this checkout,
its real Claude Code sessions (2.1.x and 1.0.x, with subagent files) copied until the size is
reached, each copy's session ids, record uuids and message and tool call ids rewritten so that
every copy is a session of its own (not a resumed one, which ingest would skip). Without that
folder, or with ``--generated``, it is generated: Claude Code 2.1.x-shaped, about 70% of lines
``progress`` records and a quarter of the bytes ``toolUseResult`` copies. Then, best of
``--repeat`` runs:

In this process:

- parse floor:   read each file and ``orjson.loads`` every line, dropping each value at once;
- naive loader:  read each file and keep ``orjson.loads`` of every line (what a loader that
                 parses everything holds);
- ingest:        ``analysis.load`` on the same folder (sessions, turns, paired calls, subagents).

End to end, as processes (start-up and imports included):

- parse floor:   ``python -c`` that imports orjson and ``orjson.loads`` every line of every file;
- tsq ingest:    ``tsq ingest CORPUS --json > /dev/null``.

Prints each baseline's time divided by ingest's: at least 1.0 means ingestion is as fast.

    python benchmarks/bench_ingest.py [--megabytes 120] [--repeat 3] [--keep DIR] [--generated]
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

import analysis

TOOLS = ("Read", "Bash", "Grep", "Edit", "Glob")
REAL_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "claude-code"
_UUID = re.compile(rb"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{4}([0-9a-f]{8})")
_MESSAGE_ID = re.compile(rb'"(msg|toolu)_')


def _record(kind: str, session: str, uuid: str, parent: str | None, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/projects/shop-api",
        "sessionId": session,
        "version": "2.1.39",
        "gitBranch": "main",
        "slug": "bench-session",
    }
    # Key order as Claude Code writes it: "message" before "type" in assistant records;
    # "toolUseResult" after "uuid" and "timestamp" in user records.
    tail = {key: extra.pop(key) for key in ("toolUseResult",) if key in extra}
    if kind == "assistant":
        record.update(extra)
        record["type"] = kind
    else:
        record["type"] = kind
        record.update(extra)
    record["uuid"] = uuid
    record["timestamp"] = "2026-02-11T20:40:51.230Z"
    record.update(tail)
    return record


def _session_lines(session: str, rng: random.Random, target_bytes: int) -> list[bytes]:
    lines: list[bytes] = []
    size = 0
    counter = 0
    parent: str | None = None

    def emit(kind: str, **extra: Any) -> None:
        nonlocal counter, parent, size
        counter += 1
        uuid = f"{session[:8]}-{counter:08d}"
        line = orjson.dumps(_record(kind, session, uuid, parent, **extra))
        lines.append(line)
        size += len(line) + 1
        if kind != "progress":
            parent = uuid

    while size < target_bytes:
        emit("user", message={"role": "user", "content": f"please fix bug {counter}"})
        for step in range(rng.randint(3, 8)):
            message_id = f"msg_{session[:8]}{counter:06d}"
            call_id = f"toolu_{session[:8]}{counter:06d}{step}"
            tool = rng.choice(TOOLS)
            blocks = [
                {"type": "text", "text": "Let me look at that. " * rng.randint(1, 6)},
                {"type": "tool_use", "id": call_id, "name": tool, "input": {"file_path": "a.py"}},
            ]
            for block in blocks:  # one content block per line, as Claude Code writes them
                emit(
                    "assistant",
                    message={
                        "model": "claude-opus-4-6",
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "content": [block],
                        "usage": {"input_tokens": 3, "output_tokens": 90},
                    },
                )
            for hook in range(rng.randint(5, 8)):
                emit(
                    "progress",
                    data={
                        "type": "hook_progress",
                        "hookEvent": "PreToolUse",
                        "hookName": f"hook{hook}",
                    },
                    parentToolUseID=call_id,
                    toolUseID=call_id,
                )
            for _ in range(rng.randint(2, 6) if tool == "Bash" else 0):
                emit(
                    "progress",
                    data={
                        "type": "bash_progress",
                        "output": "compiling module...\n" * rng.randint(1, 40),
                    },
                    parentToolUseID=call_id,
                    toolUseID=call_id,
                )
            body = "    1\u2192def handler(event):\n" * rng.randint(5, 120)
            emit(
                "user",
                message={
                    "role": "user",
                    "content": [{"tool_use_id": call_id, "type": "tool_result", "content": body}],
                },
                toolUseResult={
                    "type": "text",
                    "file": {
                        "filePath": "src/app.py",
                        "content": body,
                        "numLines": body.count("\n"),
                    },
                },
            )
    return lines


def generate(folder: Path, megabytes: int, seed: int = 7) -> tuple[int, int, int]:
    """Write the corpus; return (bytes, lines, progress lines)."""
    rng = random.Random(seed)
    per_file = 4 * 1024 * 1024
    files = max(1, megabytes * 1024 * 1024 // per_file)
    total_bytes = total_lines = progress_lines = 0
    project = folder / "-home-dev-projects-shop-api"
    project.mkdir(parents=True, exist_ok=True)
    for index in range(files):
        session = f"{index:08d}-0000-4000-8000-{rng.getrandbits(48):012x}"
        lines = _session_lines(session, rng, per_file)
        data = b"\n".join(lines) + b"\n"
        (project / f"{session}.jsonl").write_bytes(data)
        total_bytes += len(data)
        total_lines += len(lines)
        progress_lines += sum(1 for line in lines if b'"type":"progress"' in line)
    return total_bytes, total_lines, progress_lines


def _rewrite_ids(data: bytes, copy: int) -> bytes:
    """The same transcript as session number ``copy``: uuids and message/call ids made new."""
    tag = b"%04x" % copy
    data = _UUID.sub(lambda m: m.group(1) + tag + m.group(2), data)
    return _MESSAGE_ID.sub(lambda m: b'"' + m.group(1) + b"_c" + tag, data)


def copy_real(folder: Path, megabytes: int, source: Path = REAL_CORPUS) -> tuple[int, int, int]:
    """Copy the real sessions under ``source`` into ``folder`` until it holds ``megabytes``;
    return (bytes, lines, progress lines)."""
    files = sorted(p for p in source.rglob("*.jsonl") if p.is_file())
    originals = [(p.relative_to(source), p.read_bytes()) for p in files]
    total_bytes = total_lines = progress_lines = 0
    copy = 0
    while total_bytes < megabytes * 1024 * 1024:
        for relative, data in originals:
            target = (
                folder / f"copy-{copy:04d}" / _rewrite_ids(str(relative).encode(), copy).decode()
            )
            target.parent.mkdir(parents=True, exist_ok=True)
            rewritten = _rewrite_ids(data, copy)
            target.write_bytes(rewritten)
            lines = [line for line in rewritten.split(b"\n") if line.strip()]
            total_bytes += len(rewritten)
            total_lines += len(lines)
            progress_lines += sum(1 for line in lines if b'"type":"progress"' in line)
        copy += 1
    return total_bytes, total_lines, progress_lines


def parse_floor(folder: Path) -> int:
    parsed = 0
    for path in sorted(folder.rglob("*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            if line:
                orjson.loads(line)
                parsed += 1
    return parsed


def naive_loader(folder: Path) -> int:
    records = [
        orjson.loads(line)
        for path in sorted(folder.rglob("*.jsonl"))
        for line in path.read_bytes().split(b"\n")
        if line
    ]
    return len(records)


def ingest(folder: Path) -> int:
    loaded = analysis.load([folder])
    return sum(len(s.turns) for s in loaded.sessions)


FLOOR_PROCESS = """
import sys
from pathlib import Path

import orjson

for path in sorted(Path(sys.argv[1]).rglob("*.jsonl")):
    for line in path.read_bytes().split(b"\\n"):
        if line:
            orjson.loads(line)
"""


def _tsq() -> list[str]:
    """The ``tsq`` console script beside this interpreter, else ``python -m analysis``."""
    script = Path(sys.executable).with_name("tsq")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "analysis"]


def floor_process(folder: Path) -> int:
    return subprocess.run(
        [sys.executable, "-c", FLOOR_PROCESS, str(folder)], check=True, stdout=subprocess.DEVNULL
    ).returncode


def ingest_process(folder: Path) -> int:
    return subprocess.run(
        [*_tsq(), "ingest", str(folder), "--json"], check=True, stdout=subprocess.DEVNULL
    ).returncode


def best_of(repeat: int, work: Any, folder: Path) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work(folder)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--megabytes", type=int, default=120)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the corpus here and keep it")
    parser.add_argument(
        "--generated", action="store_true", help="generate the corpus even if the real one is there"
    )
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="tsq-bench-"))
    real = not args.generated and REAL_CORPUS.is_dir()
    try:
        if real:
            size, lines, progress = copy_real(folder, args.megabytes)
            kind = f"real sessions from {REAL_CORPUS}, copied"
        else:
            size, lines, progress = generate(folder, args.megabytes)
            kind = "generated"
        print(
            f"corpus ({kind}): {size / 1e6:.0f} MB, {lines} lines, "
            f"{progress / lines:.0%} progress records"
        )
        floor = best_of(args.repeat, parse_floor, folder)
        naive = best_of(args.repeat, naive_loader, folder)
        ours = best_of(args.repeat, ingest, folder)
        for label, seconds in (
            ("parse floor (orjson.loads, dropped)", floor),
            ("naive loader (orjson.loads, kept)", naive),
            ("ingest (analysis.load)", ours),
        ):
            print(f"{label:38} {seconds:6.2f} s  ({size / 1e6 / seconds:4.0f} MB/s)")
        print(f"ratio parse floor / ingest:  {floor / ours:.2f}")
        print(f"ratio naive loader / ingest: {naive / ours:.2f}  (>= 1.0: ingestion is as fast)")
        floor_end = best_of(args.repeat, floor_process, folder)
        ingest_end = best_of(args.repeat, ingest_process, folder)
        print("end to end, as processes:")
        for label, seconds in (
            ("parse floor (python -c orjson.loads)", floor_end),
            ("tsq ingest CORPUS --json > /dev/null", ingest_end),
        ):
            print(f"{label:38} {seconds:6.2f} s  ({size / 1e6 / seconds:4.0f} MB/s)")
        print(
            f"ratio parse floor process / tsq ingest process: {floor_end / ingest_end:.2f}  "
            "(>= 1.0: tsq ingest is within 1.0x the floor)"
        )
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
