"""The on-disk index: each transcript parsed once into DuckDB tables, updated incrementally.

Why DuckDB: one embedded file (no server), transactions (an update killed half-way is rolled
back, never read as complete), SQL over columnar tables for the collection-wide queries the
pages and trends need, and Parquet export for sharing beyond one machine.

A file is read again only when it changed: first what the file system says (size,
modification and change times, inode: an equal answer needs no read), then, where that moved,
a digest of sampled blocks (head, tail and between), so a touched or copied file is not parsed
again; its subagent files count with it. Files that share
a model response (a resumed session repeats the history it continues) are loaded together, and
files of a folder holding OpenAI-format trajectories and catalogs too, so the rows equal what
``analysis.load`` gives for the same files.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import multiprocessing
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir
from pydantic import BaseModel

from analysis._format import counted
from analysis.index._rows import TABLES, Rows, empty_rows, keys_of, load_rows, subagent_files
from analysis.ingest import discover_resolved, load
from analysis.models import LoadResult, ParseIssue

Discovered = tuple[list[tuple[str, str]], list[ParseIssue], list[str]]
"""What ``discover_resolved`` gives: the files with their display names, the issues of what
could not be reached, and each file's resolved path."""
BLOCK = 4096
SAMPLES = 4
"""The content digest reads this many blocks of ``BLOCK`` bytes, head and tail among them."""
BATCH_FILES = 400
"""Files written in one transaction during a build."""
UPDATE_MEMORY = "512MB"
"""What DuckDB may hold while an update writes: the blocks it wrote are on disk, and without a
limit it kept them all: a first build of 10,000 sessions peaked at 1.47 GB, 0.98 GB with it."""
SCHEMA_VERSION = 9
OWN_TABLES = ("files", "keys", "shared_keys", "state", "label_stores", "scorers")
"""The index's tables besides the rows of :data:`~analysis.index._rows.TABLES`."""
MENU_DATA = (
    "baseline_catalog.json",
    "claude_code_tools.json",
    "codex_tools.json",
    "judge_descriptions.json",
    "codex_judge_descriptions.json",
)
"""The data the menus of indexed steps are built from: when it changes, so do their figures."""
WAIT_SAY = 3.0
"""Seconds an update waits for the index's lock before saying what it waits for."""


SCORERS_TABLE = (
    "CREATE TABLE IF NOT EXISTS scorers (scorer_id VARCHAR PRIMARY KEY, name VARCHAR,"
    " test_n INTEGER, test_agreement DOUBLE, test_low DOUBLE, test_high DOUBLE, folder VARCHAR)"
)
"""The trained scorers whose judgments the index holds (:class:`analysis.models.ScorerRecord`),
one row each, written by ``tsq score``: what names them beside their judgments."""


@cache
def layout() -> str:
    """What an index's rows depend on besides the files: its tables' layout and the menus data."""
    digest = hashlib.sha256()
    for name in MENU_DATA:
        digest.update(resources.files("analysis").joinpath(f"data/{name}").read_bytes())
    return f"{SCHEMA_VERSION}+{digest.hexdigest()[:12]}"


class IndexProblem(RuntimeError):
    """An index that cannot be used, in one sentence."""


class IndexBusy(IndexProblem):
    """An index another connection has open (DuckDB's own lock on its file): in use, not
    damaged, so never moved aside."""


class IndexSummary(BaseModel):
    """What an update did (``tsq index``'s summary line)."""

    path: str
    new: int
    changed: int
    unchanged: int
    removed: int
    sessions: int
    steps: int
    seconds: float
    rebuilt: str | None = None
    """Why the index was rebuilt from nothing (a corrupt file), if it was."""

    def in_words(self) -> str:
        rebuilt = f" ({self.rebuilt})" if self.rebuilt else ""
        return (
            f"{counted(self.new, 'file')} new, {self.changed} changed, {self.unchanged} "
            f"unchanged, {self.removed} removed; {counted(self.sessions, 'session')}, "
            f"{counted(self.steps, 'step')} in "
            f"{self.path}, {self.seconds:.1f} s{rebuilt}"
        )


def default_index_path() -> Path:
    """The index under the user's cache folder (``$XDG_CACHE_HOME`` honoured)."""
    return Path(user_cache_dir("tsq-workbench")) / "index.duckdb"


def stat_key(path: str | Path) -> str:
    """What the file system says of a file and its subagent files: sizes, modification and
    change times, inodes. The change time moves with every write (and cannot be set back), so
    an equal key means an unchanged file without reading it."""
    parts = []
    for file in [os.fspath(path), *map(os.fspath, subagent_files(path))]:
        stat = os.stat(file)
        parts.append(
            f"{os.path.basename(file)}:{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:"
            f"{stat.st_ino}"
        )
    return "|".join(parts)


def identity(path: Path) -> str:
    """A file's content identity with its subagent files': sizes and a digest of sampled
    blocks (head, tail and between), read only when :func:`stat_key` changed, so a file that
    was merely touched or copied is not parsed again."""
    parts = []
    for file in [path, *subagent_files(path)]:
        with open(file, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            span = max(size - BLOCK, 0)
            digest = hashlib.blake2b(digest_size=16)
            for offset in sorted({span * i // (SAMPLES - 1) for i in range(SAMPLES)}):
                digest.update(os.pread(handle.fileno(), BLOCK, offset))
        parts.append(f"{file.name}:{size}:{digest.hexdigest()}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


@dataclass
class Parsed:
    """One file loaded alone, in a worker."""

    path: str
    display: str
    identity: str
    stat_key: str
    rows: Rows
    keys: list[str]
    kind: str
    files_read: int


def _kind(result: LoadResult) -> str:
    """``folder-bound`` for what meets other files of its folder in a load: OpenAI-format
    trajectories and the catalogs attached to them."""
    if result.catalogs or any(s.format == "openai" for s in result.sessions):
        return "folder-bound"
    if result.sessions:
        return result.sessions[0].format
    return "judgments" if result.judgments else "other"


def parse_file(path: str, display: str, root: str | None = None) -> Parsed:
    """Load one file alone (a worker's task); a file that vanished since is an issue."""
    try:
        ident, key = identity(Path(path)), stat_key(Path(path))
    except OSError as error:
        ident = key = f"unreadable:{error.strerror}"
    result = load([display], root=root)
    return Parsed(
        path=path,
        display=display,
        identity=ident,
        stat_key=key,
        rows=load_rows(result, {display: path}),
        keys=sorted(set(keys_of(result))),
        kind=_kind(result),
        files_read=result.files_read,
    )


def _parse_all(
    todo: Sequence[tuple[str, str]],
    workers: int,
    on_file: Callable[[], None] | None,
    root: str | None,
) -> Iterator[Parsed]:
    """Each file of ``todo`` parsed, in ``workers`` processes when there are enough files;
    the workers end with the update that started them (:func:`_end_with_parent`)."""
    if workers <= 1 or len(todo) < 2 * workers:
        for path, display in todo:
            yield parse_file(path, display, root)
            if on_file is not None:
                on_file()
        return
    gone, alive = multiprocessing.Pipe(duplex=False)
    with (
        gone,
        alive,
        ProcessPoolExecutor(workers, initializer=_end_with_parent, initargs=(gone, alive)) as pool,
    ):
        paths, displays = zip(*todo, strict=True)
        roots = [root] * len(paths)
        for parsed in pool.map(parse_file, paths, displays, roots, chunksize=8):
            yield parsed
            if on_file is not None:
                on_file()


def _end_with_parent(gone: Connection, alive: Connection) -> None:
    """A parsing worker's start: it ends as soon as the update that started it ends, however
    that ends (SIGKILL included), instead of living on, blocked on a queue nobody feeds.

    ``alive`` is the writing end of a pipe only the update keeps open (each worker closes its
    own copy here, forked or passed): when the update ends, the kernel closes it, the reading
    end ``gone`` reads end-of-file, and a thread waiting on it ends the worker. Unlike a
    parent-death signal (``PR_SET_PDEATHSIG``), this needs neither Linux nor the thread that
    started the worker to live on, and it works with every start method."""
    alive.close()

    def wait() -> None:
        with suppress(EOFError, OSError):
            gone.recv_bytes()
        os._exit(1)

    threading.Thread(target=wait, name="end-with-parent", daemon=True).start()


def _to_stderr(sentence: str) -> None:
    print(sentence, file=sys.stderr, flush=True)


_THREADS: dict[str, threading.Lock] = {}
_THREADS_GUARD = threading.Lock()


class _Lock:
    """The lock of one index, held: its file's record (who holds it, since when)."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.record = _record_of(handle)

    def write(self, **record: Any) -> None:
        self.record = record
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(json.dumps(record))
        self.handle.flush()


def _record_of(handle: Any) -> dict[str, Any]:
    """What a lock file says (an empty or half-written one says nothing)."""
    handle.seek(0)
    try:
        record = json.loads(handle.read() or "{}")
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


@contextmanager
def _locked(path: Path, say: Callable[[str], None] = _to_stderr) -> Iterator[_Lock]:
    """One update of an index at a time: a second one waits for the first to finish, and
    after ``WAIT_SAY`` seconds says what it waits for.

    The lock is a POSIX record lock (``fcntl.lockf``) on ``<index>.lock``. Such a lock
    belongs to the process that took it, never to the processes it forks, and the kernel
    lets it go the moment that process ends, however it ends (SIGKILL included): so an
    update's parsing workers never hold it, and a killed update's lock is free at once. (An
    ``flock``, as this lock was before, is shared with every process forked while it is held:
    workers that outlived a killed update kept it for ever, and every later command waited on
    it.) The file says who holds the lock: a record still naming a process when the lock is
    taken is that of an update that was killed, and its taking over is said, as is an
    ``flock`` still held by what an older ``tsq`` left behind, which no longer stops an
    update. A record lock cannot keep two threads of one process apart, and is let go when
    its process closes any descriptor of the file: so a thread lock comes first, and only
    this function opens the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    name = f"{path}.lock"
    with _THREADS_GUARD:
        threads = _THREADS.setdefault(name, threading.Lock())
    if not threads.acquire(timeout=WAIT_SAY):
        say(f"{path} is being updated by another thread of this process: waiting for it.")
        threads.acquire()
    try:
        with open(name, "a+") as handle:
            _wait_for(handle, path, say)
            lock = _Lock(handle)
            try:
                if lock.record.get("pid") not in (None, os.getpid()):
                    say(
                        f"{path}: process {lock.record['pid']}, which was updating it, ended "
                        "without letting go of its lock (killed or crashed): taken over."
                    )
                elif _flock_held(handle):
                    say(
                        f"{path}: its lock is still held by processes an older tsq left behind "
                        "(parsing workers that outlived it): taken over."
                    )
                now = datetime.now().strftime("%H:%M:%S")
                lock.write(**(lock.record | {"pid": os.getpid(), "since": now}))
                yield lock
            finally:
                lock.write(**{k: v for k, v in lock.record.items() if k not in ("pid", "since")})
                fcntl.lockf(handle, fcntl.LOCK_UN)
    finally:
        threads.release()


def _wait_for(handle: Any, path: Path, say: Callable[[str], None]) -> None:
    """The lock of ``handle`` taken, saying what it waits for after ``WAIT_SAY`` seconds."""
    deadline = time.monotonic() + WAIT_SAY
    while True:
        try:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as error:
            if error.errno not in (errno.EACCES, errno.EAGAIN):
                raise
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    record = _record_of(handle)
    who = (
        f"process {record['pid']} (since {record.get('since', '?')})"
        if record.get("pid")
        else "another process"
    )
    say(f"{path} is being updated by {who}: waiting for it to finish.")
    fcntl.lockf(handle, fcntl.LOCK_EX)


def _flock_held(handle: Any) -> bool:
    """Whether another process holds an ``flock`` on the lock file: the lock of an older
    ``tsq``, kept by the parsing workers that outlived it. Asked on Linux only, where an
    ``flock`` and a record lock are apart."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def connect(path: Path, read_only: bool = False) -> Any:
    """A DuckDB connection to the index; IndexBusy when another connection has it open in a
    way that excludes this one, IndexProblem when the file is not a usable index."""
    import duckdb

    try:
        conn = duckdb.connect(str(path), read_only=read_only)
    except (duckdb.Error, OSError) as error:
        if isinstance(error, duckdb.ConnectionException) or "Could not set lock" in str(error):
            raise IndexBusy(
                f"{path}: in use elsewhere ({_first_line(error)}); try again when it is done"
            ) from None
        raise IndexProblem(f"{path}: not a usable index ({_first_line(error)})") from None
    return conn


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _cause(error: BaseException) -> BaseException:
    """What DuckDB said, under the IndexProblem that :func:`connect` made of it."""
    if isinstance(error, IndexProblem) and error.__context__ is not None:
        return error.__context__
    return error


def damaged(error: BaseException) -> bool:
    """Whether a DuckDB error says that the index's file cannot be read: cut short, a block
    whose checksum fails, a file that is not DuckDB's (not: in use, or not written)."""
    import duckdb

    said = str(error)
    if "Could not set lock" in said or "write" in said.lower() or "No space" in said:
        return False
    kinds = (duckdb.IOException, duckdb.SerializationException, duckdb.InternalException)
    return isinstance(error, kinds) or "Corrupt" in said


def stamp(path: Path) -> str | None:
    """What the file system says of an index file (and whether a write-ahead log lies beside
    it): the same as when an update last left it only if nothing has touched it since."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    wal = "+wal" if Path(f"{path}.wal").exists() else ""
    return f"{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}{wal}"


def _read_whole(conn: Any) -> None:
    """Every row of every table read, so that DuckDB checks every block in use against its
    checksum: an error when any part of the file cannot be read."""
    tables = conn.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
    ).fetchall()
    for (table,) in tables:
        conn.execute(f'SELECT bit_xor(hash(t)) FROM "{table}" t').fetchall()


def _move_aside(path: Path) -> Path:
    """A damaged index (and its write-ahead log) renamed ``<index>.corrupt-TIME``, kept."""
    aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
    number = 1
    while aside.exists():
        number += 1
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}-{number}")
    try:
        for suffix in ("", ".wal"):
            if Path(f"{path}{suffix}").exists():
                Path(f"{path}{suffix}").rename(Path(f"{aside}{suffix}"))
    except OSError as error:
        raise IndexProblem(
            f"{path}: cannot be read, nor moved aside ({error.strerror}); remove it"
        ) from None
    return aside


def _set_aside(path: Path, error: BaseException, say: Callable[[str], None]) -> str:
    """``path`` moved aside as unreadable and said so; what the summary line says of it."""
    aside = _move_aside(path)
    said = _first_line(_cause(error))
    say(f"{path} could not be read ({said}): moved aside as {aside.name}, and rebuilt.")
    return f"the index was corrupt: rebuilt, the old one kept as {aside.name}"


def set_aside_if_unchanged(path: Path, seen: str | None) -> Path | None:
    """A reader's: the index it found unreadable moved aside (its lock taken, so no update
    is under way), if it is still the file it read (``seen``, its :func:`stamp`), so that
    the next update builds it anew; its new name, else None."""
    with _locked(path):
        return _move_aside(path) if stamp(path) == seen else None


def _opened(path: Path, check: bool) -> tuple[Any, list[tuple[Any, ...]]]:
    """A connection to the index, read through first (:func:`_read_whole`) when ``check``,
    its tables made, and the layout it says it has."""
    conn = connect(path)
    try:
        conn.execute(f"SET memory_limit = '{UPDATE_MEMORY}'")
        if check:
            _read_whole(conn)
        create_tables(conn)
        schema = conn.execute("SELECT value FROM state WHERE name = 'schema'").fetchall()
    except BaseException:
        conn.close()  # before it is moved aside: a path reopened in this process reuses it
        raise
    return conn, schema


def _open_for_update(
    path: Path, verified: str | None, say: Callable[[str], None]
) -> tuple[Any, str | None]:
    """The index opened for writing, its tables made, and why it was rebuilt, if it was.

    One that cannot be read (not DuckDB's, cut short, a damaged block) is moved aside, said in
    one sentence, and rebuilt. Whether every part can be read is checked by reading every
    table whenever the file is not as an update left it (``verified``, its :func:`stamp` then):
    an update killed, a file copied or cut. One in use elsewhere is an :class:`IndexBusy`."""
    try:
        conn, schema = _opened(path, check=stamp(path) != verified)
    except IndexBusy:
        raise
    except Exception as error:  # duckdb raises many kinds for a damaged file
        moved = _set_aside(path, error, say)
        conn, _ = _opened(path, check=False)
        return conn, moved
    rebuilt = None
    if schema and schema[0][0] != layout():
        for table in [*TABLES, *OWN_TABLES]:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        create_tables(conn)
        rebuilt = (
            f"the index was of another layout or menus data ({schema[0][0]}, now {layout()}): "
            "rebuilt"
        )
    return conn, rebuilt


def create_tables(conn: Any) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS files (path VARCHAR PRIMARY KEY, display VARCHAR,"
        " identity VARCHAR, stat_key VARCHAR, kind VARCHAR, files_read INTEGER,"
        " indexed_at TIMESTAMPTZ)"
    )
    conn.execute("CREATE TABLE IF NOT EXISTS keys (source_file VARCHAR, key VARCHAR)")
    conn.execute("CREATE TABLE IF NOT EXISTS shared_keys (source_file VARCHAR, key VARCHAR)")
    conn.execute("CREATE TABLE IF NOT EXISTS state (name VARCHAR PRIMARY KEY, value VARCHAR)")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS label_stores (path VARCHAR PRIMARY KEY, version INTEGER)"
    )
    conn.execute(SCORERS_TABLE)
    for table, columns in TABLES.items():
        cols = ", ".join(f"{name} {kind}" for name, kind in columns.items())
        conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({cols})")
    conn.execute(
        "INSERT OR IGNORE INTO state VALUES ('schema', ?), ('complete', 'false')",
        [layout()],
    )


def insert_rows(conn: Any, rows: Rows) -> None:
    import pyarrow as pa

    for table, columns in TABLES.items():
        if not rows[table]:
            continue
        frame = pa.Table.from_pylist(rows[table])
        conn.register("incoming", frame)
        names = ", ".join(columns)
        conn.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM incoming")
        conn.unregister("incoming")


def _delete_rows(
    conn: Any, paths: Sequence[str], tables: Iterable[str], column: str = "source_file"
) -> None:
    """The rows of ``tables`` whose ``column`` names one of ``paths``."""
    import pyarrow as pa

    conn.register("gone", pa.table({"path": list(paths)}))
    for table in tables:
        conn.execute(f"DELETE FROM {table} WHERE {column} IN (SELECT path FROM gone)")
    conn.unregister("gone")


def _forget(conn: Any, paths: Iterable[str]) -> None:
    """Everything the index holds of ``paths``: their rows, keys and files."""
    gone = sorted(set(paths))
    if not gone:
        return
    _delete_rows(conn, gone, [*TABLES, "keys"])
    _delete_rows(conn, gone, ["files"], column="path")


def _record(conn: Any, parsed: Sequence[Parsed]) -> None:
    import pyarrow as pa

    now = datetime.now(UTC)
    conn.register(
        "recorded",
        pa.Table.from_pylist(
            [
                {
                    "path": p.path,
                    "display": p.display,
                    "identity": p.identity,
                    "stat_key": p.stat_key,
                    "kind": p.kind,
                    "files_read": p.files_read,
                    "indexed_at": now,
                }
                for p in parsed
            ]
        ),
    )
    conn.execute(
        "INSERT INTO files SELECT path, display, identity, stat_key, kind, files_read,"
        " indexed_at FROM recorded"
    )
    conn.unregister("recorded")
    keys = [{"source_file": p.path, "key": key} for p in parsed for key in p.keys]
    if keys:
        conn.register("new_keys", pa.Table.from_pylist(keys))
        conn.execute("INSERT INTO keys SELECT source_file, key FROM new_keys")
        conn.unregister("new_keys")


def _inside(path: str, roots: Sequence[Path]) -> bool:
    candidate = Path(path)
    return any(candidate == root or root in candidate.parents for root in roots)


@dataclass
class _Plan:
    now: dict[str, str]
    """Files under the paths given: resolved path -> display name."""
    todo: list[tuple[str, str]] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    new: int = 0
    touched: list[tuple[str, str]] = field(default_factory=list)
    """Files whose metadata changed but not their content: (path, new stat key)."""
    indexed: set[str] = field(default_factory=set)
    """Files to parse that the index already holds rows of (the others have none to drop)."""


def _plan(conn: Any, paths: Sequence[str | Path], discovered: Discovered) -> _Plan:
    found, _, resolved = discovered
    now = {path: display for path, (_, display) in zip(resolved, found, strict=True)}
    stored = {
        path: (ident, key)
        for path, ident, key in conn.execute(
            "SELECT path, identity, stat_key FROM files"
        ).fetchall()
    }
    roots = [Path(p).expanduser().resolve() for p in paths]
    plan = _Plan(now=now)
    plan.removed = [p for p in stored if p not in now and _inside(p, roots)]
    for path, display in now.items():
        known = stored.get(path)
        try:
            key = stat_key(path)
            same = known is not None and (known[1] == key or known[0] == identity(Path(path)))
        except OSError:
            same, key = False, ""
        if same:
            plan.unchanged += 1
            if known is not None and known[1] != key:
                plan.touched.append((path, key))
        else:
            plan.new += known is None
            if known is not None:
                plan.indexed.add(path)
            plan.todo.append((path, display))
    return plan


def shared_groups(conn: Any, keys: str = "shared_keys") -> list[list[str]]:
    """The files of the temporary table ``scope`` that are loaded together, each group sorted:
    those sharing a model response (a resumed session repeats the history it continues;
    through others too), and a folder's OpenAI-format trajectories and catalogs. A file alone
    is in no group. Found in the index's ``shared_keys`` (the keys of more than one file,
    :func:`_share_keys`), else in the table ``keys`` names, so nothing of the whole collection
    is held in memory; files outside ``scope`` never count (a copy of a session elsewhere in
    the index does not make this one a resumed session)."""
    parent: dict[str, str] = {}

    def find(item: str) -> str:
        while parent.setdefault(item, item) != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    shared = conn.execute(
        f"SELECT list(DISTINCT source_file ORDER BY source_file) FROM {keys}"
        " WHERE source_file IN (SELECT path FROM scope) GROUP BY key"
        " HAVING count(DISTINCT source_file) > 1"
    ).fetchall()
    for (files,) in shared:
        for file in files[1:]:
            parent[find(file)] = find(files[0])
    bound = conn.execute(
        "SELECT path FROM files WHERE kind = 'folder-bound' AND path IN (SELECT path FROM scope)"
        " ORDER BY path"
    ).fetchall()
    by_folder: dict[str, str] = {}
    for (file,) in bound:
        parent[find(file)] = find(by_folder.setdefault(str(Path(file).parent), file))
    groups: dict[str, list[str]] = {}
    for file in parent:
        groups.setdefault(find(file), []).append(file)
    return [sorted(members) for members in groups.values() if len(members) > 1]


def _together(conn: Any, parsed: set[str], plan: _Plan) -> list[list[str]]:
    """Groups of files to load together (:func:`shared_groups`, the files under the paths of
    this update) that hold a changed or removed file."""
    changed = parsed | set(plan.removed)
    if not changed:
        return []
    with_scope(conn, [*plan.now, *plan.removed])  # the new files' keys are in keys alone yet
    return [group for group in shared_groups(conn, "keys") if changed.intersection(group)]


def _share_keys(conn: Any) -> None:
    """``shared_keys``: the rows of ``keys`` whose key more than one file holds. A few rows
    (resumed sessions) beside the millions of ``keys``, written when an update changed the
    index, so that opening a collection does not group every key again."""
    conn.execute("BEGIN TRANSACTION")
    conn.execute("DELETE FROM shared_keys")
    conn.execute(
        "INSERT INTO shared_keys SELECT source_file, key FROM keys WHERE key IN"
        " (SELECT key FROM keys GROUP BY key HAVING count(*) > 1)"  # a file holds a key once
    )
    conn.execute("INSERT OR REPLACE INTO state VALUES ('shared_keys', 'fresh')")
    conn.execute("COMMIT")


def with_scope(conn: Any, scope: Sequence[str]) -> None:
    """The paths of ``scope`` as the temporary table ``scope`` (``path``) of ``conn``: a list
    parameter, so that reading the index needs neither pyarrow nor numpy (``tsq ingest``)."""
    conn.execute(
        "CREATE OR REPLACE TEMP TABLE scope AS SELECT unnest($1::VARCHAR[]) AS path", [list(scope)]
    )


def update_index(
    paths: Sequence[str | Path],
    index: str | Path | None = None,
    workers: int | None = None,
    on_file: Callable[[], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
    root: str | Path | None = None,
    discovered: Discovered | None = None,
    label_stores: Sequence[str | Path] = (),
    on_note: Callable[[str], None] | None = None,
) -> IndexSummary:
    """Build or update the index over ``paths``: new and changed files are parsed (in
    parallel on ``workers`` processes, all cores by default), removed files' rows dropped,
    files sharing history loaded together. Each batch of files is its own transaction and the
    index is marked complete only at the end, so an update killed half-way is finished by the
    next one and never read as complete. ``on_plan`` hears how many files will be parsed. With a
    ``root`` (the app's data root), nothing outside it is read, links included; ``discovered``
    is what ``discover_resolved(paths, root)`` gave, when the caller has it already. The
    people's step labels of each of ``label_stores`` (adjudication stores) are brought in
    too, read again when a label was saved there since. ``on_note`` hears, in one sentence,
    what the update waits for or takes over (on stderr by default)."""
    started = time.monotonic()
    path = Path(index) if index is not None else default_index_path()
    import duckdb

    say = on_note or _to_stderr
    inside = None if root is None else str(root)

    def update(conn: Any, rebuilt: str | None) -> IndexSummary:
        plan = _plan(conn, paths, discovered or discover_resolved(paths, inside))
        if on_plan is not None:
            on_plan(len(plan.todo))
        _refresh(conn, plan.touched)
        _update_labels(conn, label_stores)
        if not plan.todo and not plan.removed and _complete(conn):
            if not _keys_shared(conn):  # an index written before shared_keys was kept
                _share_keys(conn)
            return _summary(conn, path, plan, started, rebuilt)  # nothing else to write
        conn.execute("UPDATE state SET value = 'false' WHERE name = 'complete'")
        conn.execute("INSERT OR REPLACE INTO state VALUES ('shared_keys', 'stale')")
        parsed: set[str] = set()
        batch: list[Parsed] = []
        for item in _parse_all(plan.todo, workers or os.cpu_count() or 1, on_file, inside):
            parsed.add(item.path)
            batch.append(item)
            if len(batch) >= BATCH_FILES:
                _write_batch(conn, batch, plan.indexed)
                batch = []
        _write_batch(conn, batch, plan.indexed)
        _reload_groups(conn, parsed, plan, inside)
        _share_keys(conn)
        conn.execute("UPDATE state SET value = 'true' WHERE name = 'complete'")
        return _summary(conn, path, plan, started, rebuilt)

    with _locked(path, say) as lock:
        conn, rebuilt = _open_for_update(path, lock.record.get("verified"), say)
        try:
            try:
                summary = update(conn, rebuilt)
            except duckdb.Error as error:  # a damaged block the update came upon: rebuilt
                if not damaged(error):
                    raise
                conn.close()
                rebuilt = _set_aside(path, error, say)
                conn, _ = _opened(path, check=False)
                summary = update(conn, rebuilt)
        except duckdb.Error as error:
            raise IndexProblem(f"{path}: cannot be updated ({_first_line(error)})") from None
        finally:
            conn.close()
        lock.write(**(lock.record | {"verified": stamp(path)}))
        return summary


PARTITIONED = tuple(TABLES)


def export_parquet(index: str | Path | None, folder: str | Path) -> dict[str, int]:
    """Every table of a complete index as Parquet under ``folder/TABLE/``, partitioned by
    ``project`` and ``month`` (of the session's start), each file named uniquely so that the
    folders of two machines combine by being put together; the ``scorers`` table (without the
    folders they were read from) as one file. ``folder`` is replaced. Returns
    the rows written per table."""
    import shutil

    from analysis.index._read import IndexReader

    target = Path(folder)
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    written = {}
    with IndexReader(index) as reader:
        scorers = int(reader.conn.sql("SELECT count(*) FROM scorers").fetchall()[0][0])
        written["scorers"] = scorers
        if scorers:  # small, and not a session's: one file, named uniquely; no machine path
            (target / "scorers").mkdir()
            reader.conn.execute(
                "COPY (SELECT * EXCLUDE (folder) FROM scorers) TO "
                f"'{target / 'scorers' / f'part-{uuid.uuid4()}.parquet'}' (FORMAT parquet)"
            )
        for table in PARTITIONED:
            sessions = (  # a label's session: wherever it was read from
                "(SELECT session_id, any_value(project) AS project, min(started_at) AS started_at"
                " FROM sessions GROUP BY session_id) s USING (session_id)"
                if table == "labels"
                else "(SELECT source_file, session_id, project, started_at FROM sessions) s "
                "USING (source_file, session_id)"
            )
            keyed = (
                f"SELECT t.*, coalesce(s.project, '') AS project_key, "
                f"coalesce(strftime(s.started_at, '%Y-%m'), 'unknown') AS month FROM {table} t "
                f"LEFT JOIN {sessions}"
                if table != "sessions"
                else "SELECT *, coalesce(project, '') AS project_key, "
                "coalesce(strftime(started_at, '%Y-%m'), 'unknown') AS month FROM sessions"
            )
            rows = reader.conn.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0]
            written[table] = int(rows)
            if not rows:
                continue
            reader.conn.execute(
                f"COPY ({keyed}) TO '{target / table}' (FORMAT parquet, "
                "PARTITION_BY (project_key, month), FILENAME_PATTERN 'part-{uuid}')"
            )
    return written


def _refresh(conn: Any, touched: Sequence[tuple[str, str]]) -> None:
    """Files touched or copied without a change of content: their new metadata, kept."""
    if touched:
        conn.executemany(
            "UPDATE files SET stat_key = ? WHERE path = ?", [(k, p) for p, k in touched]
        )


def _update_labels(conn: Any, stores: Sequence[str | Path]) -> None:
    """Each store's current step labels (the latest of each labeller on each step), replaced
    in one transaction when its latest label is not the one indexed; a store that is gone
    leaves none."""
    if not stores:
        return
    import sqlite3

    from analysis.align import session_of
    from analysis.study import LabelStore

    for store in stores:
        path = Path(store).resolve()
        try:
            current = LabelStore(path) if path.is_file() else None
            version = current.step_labels_version() if current is not None else 0
            labels = current.step_labels() if current is not None else []
        except sqlite3.DatabaseError as error:
            raise IndexProblem(f"{store}: not a label store ({_first_line(error)})") from error
        known = conn.execute("SELECT version FROM label_stores WHERE path = ?", [str(path)])
        if known.fetchall() == [(version,)]:
            continue
        conn.execute("BEGIN TRANSACTION")
        conn.execute("DELETE FROM labels WHERE source_file = ?", [str(path)])
        if labels:
            conn.executemany(
                "INSERT INTO labels VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        str(path),
                        x.item_id,
                        session_of(x.item_id),
                        x.labeller,
                        x.value,
                        x.reason,
                        x.labelled_at,
                    )
                    for x in labels
                ],
            )
        conn.execute("INSERT OR REPLACE INTO label_stores VALUES (?, ?)", [str(path), version])
        conn.execute("COMMIT")


def _keys_shared(conn: Any) -> bool:
    """Whether ``shared_keys`` is as the last update left ``keys`` (:func:`_share_keys`)."""
    state = conn.execute("SELECT value FROM state WHERE name = 'shared_keys'").fetchall()
    return bool(state) and state[0][0] == "fresh"


def _complete(conn: Any) -> bool:
    state = conn.execute("SELECT value FROM state WHERE name = 'complete'").fetchall()
    return bool(state) and state[0][0] == "true"


def _summary(
    conn: Any, path: Path, plan: _Plan, started: float, rebuilt: str | None
) -> IndexSummary:
    sessions, steps = (
        conn.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        for table in ("sessions", "steps")
    )
    return IndexSummary(
        path=str(path),
        new=plan.new,
        changed=len(plan.todo) - plan.new,
        unchanged=plan.unchanged,
        removed=len(plan.removed),
        sessions=sessions,
        steps=steps,
        seconds=time.monotonic() - started,
        rebuilt=rebuilt,
    )


def _write_batch(conn: Any, batch: Sequence[Parsed], indexed: set[str]) -> None:
    """One transaction: the batch's rows in place of what the index held of those files. The
    batch is then let go, so memory stays bounded by a batch however many files there are."""
    if not batch:
        return
    conn.execute("BEGIN TRANSACTION")
    _forget(conn, (p.path for p in batch if p.path in indexed))
    rows = empty_rows()
    for item in batch:
        for table, table_rows in item.rows.items():
            rows[table] += table_rows
    insert_rows(conn, rows)
    _record(conn, batch)
    conn.execute("COMMIT")


def _reload_groups(conn: Any, parsed: set[str], plan: _Plan, root: str | None) -> None:
    """Removed files out; files that share history (or a folder's catalog) loaded together."""
    conn.execute("BEGIN TRANSACTION")
    groups = _together(conn, parsed, plan)
    _forget(conn, plan.removed)
    displays = dict(conn.execute("SELECT path, display FROM files").fetchall())
    for group in groups:
        members = [f for f in group if f in displays]
        result = load([displays[f] for f in members], root=root)
        rows = load_rows(result, {displays[f]: f for f in members})
        _delete_rows(conn, members, TABLES)
        insert_rows(conn, rows)
    conn.execute("COMMIT")
