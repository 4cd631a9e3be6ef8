"""Reading the index: what ``tsq ingest`` reports, from the tables instead of the files."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analysis.index._build import (
    SCORERS_TABLE,
    Discovered,
    IndexProblem,
    connect,
    damaged,
    default_index_path,
    set_aside_if_unchanged,
    stamp,
    with_scope,
)
from analysis.index._rows import SCORER_OWN
from analysis.ingest import (
    IngestReport,
    IngestTotals,
    SessionSummary,
    discover_resolved,
    registered,
    sorted_counts,
)
from analysis.models import Judgment, LoadResult, ParseIssue, ScorerRecord

if TYPE_CHECKING:
    import polars as pl


class IndexReader:
    """A read-only view of a complete index (or, :meth:`from_parquet`, of exported tables)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_index_path()
        if not self.path.is_file():
            raise IndexProblem(f"{self.path}: no index yet (build it with tsq index PATH...)")
        import duckdb

        self.seen = stamp(self.path)
        self.conn: Any = connect(self.path, read_only=True)
        try:
            complete = self.conn.execute(
                "SELECT value FROM state WHERE name = 'complete'"
            ).fetchall()
        except duckdb.CatalogException:  # killed before its first tables were written
            complete = []
        except duckdb.Error as error:
            raise self.unreadable(error) from None
        if not complete or complete[0][0] != "true":
            self.conn.close()
            raise IndexProblem(
                f"{self.path}: an update was interrupted; run tsq index again to finish it"
            )

    def close(self) -> None:
        self.conn.close()

    def unreadable(self, error: BaseException) -> IndexProblem:
        """The problem of a DuckDB error met reading the index, in one sentence. A damaged
        index is moved aside (unless an update has replaced it meanwhile), so that the next
        update builds it anew rather than trusting it."""
        self.conn.close()
        said = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if not damaged(error):
            return IndexProblem(f"{self.path}: cannot be read ({said})")
        aside = set_aside_if_unchanged(self.path, self.seen)
        kept = f"moved aside as {aside.name}, " if aside is not None else ""
        return IndexProblem(
            f"{self.path} could not be read ({said}): {kept}tsq index builds it again"
        )

    @contextmanager
    def guarded(self) -> Iterator[None]:
        """A DuckDB error met inside, as :meth:`unreadable` says it."""
        import duckdb

        try:
            yield
        except duckdb.Error as error:
            raise self.unreadable(error) from None

    def __enter__(self) -> IndexReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ingest_report(
        self,
        paths: Sequence[str | Path],
        root: str | Path | None = None,
        discovered: Discovered | None = None,
    ) -> IngestReport:
        """The same report ``analysis.ingest_report(analysis.load(paths, root=root))`` gives,
        from the index (which must be up to date for ``paths``: ``update_index`` first)."""
        _, discover_issues, resolved = discovered or discover_resolved(paths, root)
        order = {path: number for number, path in enumerate(resolved)}
        scope = list(order)
        q = self.in_scope
        sessions = q(
            "SELECT source_file, session_id, source, format, turns, position FROM sessions",
            scope,
        )
        sessions.sort(key=lambda row: (order[row[0]], row[5]))
        calls: dict[tuple[str, str, bool], Counter[str]] = {}
        for file, session, in_subagent, name, n in q(
            "SELECT source_file, session_id, in_subagent, name, count(*) FROM calls",
            scope,
            " GROUP BY ALL",
        ):
            calls.setdefault((file, session, in_subagent), Counter())[name] = n
        issues = self.issues_by_session(scope)
        summaries = []
        registry = registered()
        all_calls: Counter[str] = Counter()
        all_subagent: Counter[str] = Counter()
        for file, session_id, source, fmt, turns, _ in sessions:
            own = calls.get((file, session_id, False), Counter())
            sub = calls.get((file, session_id, True), Counter())
            all_calls.update(own)
            all_subagent.update(sub)
            summaries.append(
                SessionSummary(
                    session_id=session_id,
                    source=source,
                    format=fmt,
                    thread_id=registry.thread_of(session_id, source),
                    turns=turns,
                    tool_calls=sorted_counts(own),
                    subagent_tool_calls=sorted_counts(sub),
                    issues=issues.get((file, session_id), []),
                )
            )
        file_issues = self.file_issues(issues, discover_issues, order)
        totals = IngestTotals(
            files=self.files_read(scope),
            sessions=len(summaries),
            turns=sum(s.turns for s in summaries),
            tool_calls=sorted_counts(all_calls),
            subagent_tool_calls=sorted_counts(all_subagent),
            issues=len(file_issues) + sum(len(s.issues) for s in summaries),
            file_issues=file_issues,
        )
        return IngestReport(sessions=summaries, totals=totals)

    def files_read(self, scope: list[str]) -> int:
        """How many files a load of ``scope`` reads (subagent files included)."""
        read = self.in_scope("SELECT files_read FROM files", scope, path_column="path")
        return sum(n for (n,) in read)

    def issues_by_session(self, scope: list[str]) -> dict[tuple[str, str | None], list[ParseIssue]]:
        """The issues of the files in ``scope``, per (file, session); a file's own issues
        under session None."""
        issues: dict[tuple[str, str | None], list[ParseIssue]] = {}
        for file, session, shown, line, reason in self.in_scope(
            "SELECT source_file, session_id, file, line, reason FROM issues",
            scope,
            " ORDER BY source_file, session_id, position",
        ):
            issues.setdefault((file, session), []).append(
                ParseIssue(file=shown, line=line, reason=reason)
            )
        return issues

    @staticmethod
    def file_issues(
        issues: dict[tuple[str, str | None], list[ParseIssue]],
        discover_issues: list[ParseIssue],
        order: dict[str, int],
    ) -> list[ParseIssue]:
        """The issues of no session, as a load lists them: what could not be reached first,
        then each file's in file order."""
        found = list(discover_issues)
        for file in sorted({f for f, s in issues if s is None}, key=lambda f: order.get(f, -1)):
            found += issues[file, None]
        return found

    def in_scope(
        self, query: str, scope: list[str], tail: str = "", path_column: str = "source_file"
    ) -> list[tuple[Any, ...]]:
        """``query`` over the rows of the files in ``scope`` (resolved paths, a temporary
        table ``scope`` that ``tail`` may name too)."""
        with self.guarded():
            return list(self.conn.execute(self._scoped(query, scope, tail, path_column)).fetchall())

    def in_scope_frame(
        self,
        query: str,
        scope: list[str],
        schema: Mapping[str, Any],
        tail: str = "",
        path_column: str = "source_file",
    ) -> pl.DataFrame:
        """:meth:`in_scope` as a table of ``schema`` (its columns in the query's order), read
        through Arrow: no Python value is made for each of a hundred thousand rows."""
        import polars as pl

        with self.guarded():
            frame = arrow_frame(self.conn, self._scoped(query, scope, tail, path_column))
        return frame.rename(dict(zip(frame.columns, schema, strict=True))).cast(pl.Schema(schema))

    def _scoped(self, query: str, scope: list[str], tail: str, path_column: str) -> str:
        """``query`` limited to the files of ``scope``, made the temporary table ``scope``."""
        with_scope(self.conn, scope)
        return f"{query} WHERE {path_column} IN (SELECT path FROM scope){tail}"


def arrow_frame(conn: Any, query: str) -> pl.DataFrame:
    """What ``query`` gives on ``conn``, as a polars table read through Arrow."""
    import polars as pl

    frame = pl.from_arrow(conn.sql(query).to_arrow_table())
    assert isinstance(frame, pl.DataFrame)
    return frame


def scorer_judgments_in_scope(
    conn: Any, tail: str = "", parameters: Sequence[object] = ()
) -> list[Judgment]:
    """The judgments trained step scorers wrote into the index (``tsq score``) for the files
    of the temporary table ``scope``, and ``tail``'s further conditions (with ``parameters``):
    rows of the shape ``tsq judge --out`` writes, ``rater`` ``scorer``, no votes; by session,
    turn and step."""
    from analysis.scorer import scored_step

    rows = conn.execute(
        "SELECT session_id, turn_index, step_index, message_id, parent_call_id, condition,"
        " judge_id, model, score, catalog_size FROM judgments"
        f" WHERE source_file IN (SELECT path FROM scope) AND {SCORER_OWN}{tail}"
        " ORDER BY session_id, turn_index, step_index, parent_call_id NULLS FIRST",
        list(parameters),
    ).fetchall()
    return [
        scored_step(
            session_id=row[0],
            turn_index=row[1],
            step_index=row[2],
            message_id=row[3],
            parent_call_id=row[4],
            condition=row[5],
            scorer_id=row[6],
            name=row[7],
            probability=row[8],
            catalog_size=row[9] or 0,
        )
        for row in rows
    ]


def scorer_records(conn: Any) -> dict[str, ScorerRecord]:
    """The ``scorers`` table of an index (or of Parquet folders put together: a scorer named
    by two machines once), by ``scorer_id``."""
    rows = conn.execute(
        "SELECT scorer_id, any_value(name), any_value(test_n), any_value(test_agreement),"
        " any_value(test_low), any_value(test_high), any_value(folder) FROM scorers"
        " GROUP BY scorer_id"
    ).fetchall()
    return {
        row[0]: ScorerRecord(
            scorer_id=row[0],
            name=row[1],
            test_n=row[2] or 0,
            test_agreement=row[3],
            test_agreement_ci=(row[4], row[5]) if row[4] is not None else None,
            folder=row[6],
        )
        for row in rows
    }


class ParquetTables:
    """The tables of one or more ``tsq index --parquet`` folders put together (two machines'
    exports side by side in one folder), read where they lie: the same ``conn`` the trends
    query, with a view per table."""

    def __init__(self, folder: str | Path) -> None:
        import duckdb

        from analysis.index._rows import TABLES

        root = Path(folder)
        self.conn: Any = duckdb.connect()
        for table, columns in TABLES.items():
            files = sorted(root.glob(f"**/{table}/**/*.parquet"))
            names = ", ".join(columns)
            if files:
                listing = ", ".join(f"'{file}'" for file in files)
                self.conn.execute(
                    f"CREATE VIEW {table} AS SELECT {names} FROM read_parquet([{listing}], "
                    "hive_partitioning = true, union_by_name = true)"
                )
            else:
                cols = ", ".join(f"{name} {kind}" for name, kind in columns.items())
                self.conn.execute(f"CREATE TABLE {table} ({cols})")
        scorers = sorted(root.glob("**/scorers/*.parquet"))
        if scorers:  # exported without the folders they were read from
            listing = ", ".join(f"'{file}'" for file in scorers)
            self.conn.execute(
                "CREATE VIEW scorers AS SELECT *, NULL::VARCHAR AS folder"
                f" FROM read_parquet([{listing}], union_by_name = true)"
            )
        else:
            self.conn.execute(SCORERS_TABLE)

    def scorers(self) -> dict[str, ScorerRecord]:
        """The trained scorers the folders' ``scorers`` files name, by ``scorer_id``."""
        return scorer_records(self.conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> ParquetTables:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LoadedTables:
    """The index's tables of one load, in memory (the HTML report's trends, from the sessions
    and judgments it was given): the same ``conn`` the trends query."""

    def __init__(self, result: LoadResult) -> None:
        import duckdb

        from analysis.index._build import create_tables, insert_rows
        from analysis.index._rows import load_rows

        self.conn: Any = duckdb.connect()
        create_tables(self.conn)
        insert_rows(self.conn, load_rows(result, {}, with_findings=False, step_inputs=False))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> LoadedTables:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
