"""Labels from several raters on the same items, read into a :class:`LabelSet`.

Labels come in long form (``item_id, rater, rater_kind, field, value``) or wide form (one row
per item and rater, one column per field) as CSV, JSON Lines or Parquet. Every bad row becomes
a :class:`ParseIssue` naming its file and line; every valid row is kept.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal, get_args

import orjson
import polars as pl

from analysis._jsonio import iter_jsonl
from analysis.models import ParseIssue
from analysis.study._config import FieldSpec, LabelConfig, LabelError, default_config

RaterKind = Literal["llm", "scorer", "council", "human", "adjudicator"]
RATER_KINDS: tuple[RaterKind, ...] = get_args(RaterKind)
LONG_COLUMNS = ("item_id", "rater", "rater_kind", "field", "value")
ID_COLUMNS = ("item_id", "rater", "rater_kind")
# Columns of a wide file that describe the item rather than a label.
ITEM_COLUMNS = ("redundant_calls", "session_id")
LABEL_SUFFIXES = (".csv", ".jsonl", ".parquet")


class LabelSet:
    """Labels in long form plus the config that declares their fields.

    ``frame`` has one row per label: ``item_id, rater, rater_kind, field, value``.
    ``items`` has per-item columns found beside the labels (``redundant_calls``).
    """

    def __init__(
        self,
        frame: pl.DataFrame,
        config: LabelConfig,
        issues: list[ParseIssue],
        items: pl.DataFrame | None = None,
    ) -> None:
        self.frame = frame
        self.config = config
        self.issues = issues
        self.items = items if items is not None else pl.DataFrame(schema=_ITEMS_SCHEMA)

    @property
    def fields(self) -> list[str]:
        """Declared fields that have labels, in declared order, then undeclared ones."""
        present = set(self.frame["field"].unique().to_list())
        declared = [spec.name for spec in self.config.fields if spec.name in present]
        return declared + sorted(present - set(declared))

    def spec(self, field: str) -> FieldSpec:
        """The declared spec, or a nominal one whose vocabulary is the values seen."""
        declared = self.config.field(field)
        if declared is not None and declared.values:
            return declared
        seen = self.frame.filter(pl.col("field") == field)["value"].unique().sort().to_list()
        if declared is not None:
            return declared.model_copy(update={"values": seen})
        return FieldSpec(name=field, values=seen)

    def raters(self) -> pl.DataFrame:
        """One row per rater with its kind and how many labels it gave."""
        return (
            self.frame.group_by("rater", "rater_kind")
            .agg(pl.len().alias("labels"), pl.col("item_id").n_unique().alias("items"))
            .sort("rater_kind", "rater")
        )


_LABELS_SCHEMA = {
    "item_id": pl.String,
    "rater": pl.String,
    "rater_kind": pl.String,
    "field": pl.String,
    "value": pl.String,
    "file": pl.String,
    "line": pl.Int64,
}
_ITEMS_SCHEMA = {"item_id": pl.String, "redundant_calls": pl.Int64}


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _not_text(row: dict[str, Any], keys: Iterable[str]) -> str | None:
    """Why an id in a typed row (JSONL, Parquet) is refused: ``true`` or a list is no id.

    Text and whole numbers are ids; a CSV's cells are always text."""
    for key in keys:
        raw = row.get(key)
        if raw is None or (isinstance(raw, str | int) and not isinstance(raw, bool)):
            continue
        shown = ("true" if raw else "false") if isinstance(raw, bool) else type(raw).__name__
        return f"{key} is {shown}, not text"
    return None


class _RowReader:
    """Turns rows (as dicts) of one file into label rows, validating each."""

    def __init__(self, file: str, config: LabelConfig, issues: list[ParseIssue]) -> None:
        self.file = file
        self.config = config
        self.issues = issues
        self.labels: list[dict[str, Any]] = []
        self.items: dict[str, int] = {}
        self.wide: bool | None = None
        self.items_only = False

    def problem(self, line: int, reason: str) -> None:
        self.issues.append(ParseIssue(file=self.file, line=line, reason=reason))

    def add(self, line: int, row: dict[str, Any]) -> None:
        if self.wide is None:
            self.wide = not {"field", "value"} <= row.keys()
            self.items_only = "rater" not in row and "redundant_calls" in row
        wrong = _not_text(row, ID_COLUMNS)
        if wrong is not None:
            self.problem(line, wrong)
            return
        if self.items_only:
            self._item_columns(line, _text(row.get("item_id")), row)
            return
        ids = {key: _text(row.get(key)) for key in ID_COLUMNS}
        missing = [key for key, value in ids.items() if not value]
        if missing:
            self.problem(line, f"missing {', '.join(missing)}")
            return
        if ids["rater_kind"] not in RATER_KINDS:
            kinds = ", ".join(RATER_KINDS)
            self.problem(line, f"rater_kind {ids['rater_kind']!r} is not one of {kinds}")
            return
        self._item_columns(line, ids["item_id"], row)
        pairs = (
            [(key, row[key]) for key in row if key not in (*ID_COLUMNS, *ITEM_COLUMNS)]
            if self.wide
            else [(_text(row.get("field")), row.get("value"))]
        )
        for field, raw in pairs:
            value = _text(raw)
            if not field or (not value and not self.wide):
                self.problem(line, "missing field or value")
            elif value and self._valid(line, field, value):
                self.labels.append({**ids, "field": field, "value": value, "line": line})

    def _item_columns(self, line: int, item_id: str, row: dict[str, Any]) -> None:
        raw = _text(row.get("redundant_calls"))
        if not raw or not item_id:
            return
        try:
            count = int(raw)
        except ValueError:
            self.problem(line, f"redundant_calls {raw!r} is not a whole number")
            return
        self.items[item_id] = count

    def _valid(self, line: int, field: str, value: str) -> bool:
        spec = self.config.field(field)
        if spec is None or not spec.values or value in spec.values:
            return True
        self.problem(line, f"{field} value {value!r} is not one of {', '.join(spec.values)}")
        return False


class _Lines:
    """A CSV file's lines, read as bytes one at a time and decoded for the csv module.

    A line that is not UTF-8 is decoded with replacement characters, so the csv module still
    sees where its records end, and remembered in ``bad`` (line number: why), so the record
    holding it is dropped as an issue rather than the whole file.
    """

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.bad: dict[int, str] = {}
        self.number = 0

    def __iter__(self) -> Iterator[str]:
        for chunk in self.handle:
            # The csv module splits records at \r, \n or \r\n, as bytes.splitlines does.
            for line in chunk.splitlines(keepends=True):
                self.number += 1
                try:
                    text = line.decode("utf-8")
                except UnicodeDecodeError as error:
                    self.bad[self.number] = (
                        f"not UTF-8 text: byte 0x{line[error.start]:02x} at position "
                        f"{error.start + 1} of the line ({error.reason})"
                    )
                    text = line.decode("utf-8", errors="replace")
                if self.number == 1:
                    text = text.removeprefix("\ufeff")  # a UTF-8 byte-order mark
                yield text

    def first_bad(self, first: int, last: int) -> tuple[int, str] | None:
        """The first line from ``first`` to ``last`` that is not UTF-8, forgetting those."""
        found = sorted(number for number in self.bad if number <= last)
        reasons = [(number, self.bad.pop(number)) for number in found]
        return next(((n, why) for n, why in reasons if n >= first), None)


def _csv_rows(path: Path, issues: list[ParseIssue]) -> Iterator[tuple[int, dict[str, Any]]]:
    file = str(path)
    with path.open("rb") as handle:
        lines = _Lines(handle)
        reader = csv.reader(lines)
        try:
            header = next(reader, [])
        except csv.Error as error:
            issues.append(ParseIssue(file=file, line=1, reason=f"bad CSV header ({error})"))
            return
        bad = lines.first_bad(1, reader.line_num)
        if bad is not None:
            issues.append(ParseIssue(file=file, line=bad[0], reason=f"the header is {bad[1]}"))
            return
        end = reader.line_num
        while True:
            first = end + 1  # a record is reported at the line it starts on
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as error:  # the reader goes on with the next record
                end = reader.line_num
                lines.first_bad(first, end)
                issues.append(ParseIssue(file=file, line=first, reason=f"bad CSV ({error})"))
                continue
            end = reader.line_num
            bad = lines.first_bad(first, end)
            if bad is not None:  # named at the line holding the byte
                issues.append(ParseIssue(file=file, line=bad[0], reason=bad[1]))
            elif len(cells) > len(header):
                issues.append(ParseIssue(file=file, line=first, reason="more cells than columns"))
            elif cells:  # a blank line is no record; missing cells are None
                padded: list[str | None] = [*cells, *[None] * (len(header) - len(cells))]
                yield first, dict(zip(header, padded, strict=True))


def _parquet_rows(path: Path, issues: list[ParseIssue]) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        frame = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        issues.append(ParseIssue(file=str(path), reason=f"not a readable Parquet file ({error})"))
        return
    yield from enumerate(frame.iter_rows(named=True), start=1)


def _jsonl_rows(path: Path, issues: list[ParseIssue]) -> Iterator[tuple[int, dict[str, Any]]]:
    return _jsonl_lines(path.read_bytes(), path, issues)


def _jsonl_lines(
    data: bytes, path: Path, issues: list[ParseIssue]
) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, value in iter_jsonl(data, str(path), issues, orjson.loads):
        if isinstance(value, dict):
            yield number, value
        else:
            issues.append(ParseIssue(file=str(path), line=number, reason="not a JSON object"))


_READERS = {".csv": _csv_rows, ".parquet": _parquet_rows, ".jsonl": _jsonl_rows}


def read_rows(path: Path, issues: list[ParseIssue]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, row)`` of a CSV, JSONL or Parquet file; unreadable parts become issues."""
    return _READERS[path.suffix](path, issues)


def first_columns(path: Path, issues: list[ParseIssue] | None = None) -> set[str]:
    """The column names of a CSV, JSONL or Parquet file's first row (empty if none).

    Why a file could not be read goes to ``issues`` when given.
    """
    if path.suffix not in _READERS or not path.is_file():
        return set()
    found = [] if issues is None else issues
    if path.suffix == ".jsonl":  # transcripts can be large: read only the first line
        with path.open("rb") as handle:
            head = handle.readline()
        first = next(_jsonl_lines(head, path, found), None)
    else:
        first = next(read_rows(path, found), None)
    return set(first[1]) if first else set()


def read_labels(paths: Iterable[str | Path], config: LabelConfig | None = None) -> LabelSet:
    """Read label files (long or wide form; CSV, JSONL or Parquet) into one :class:`LabelSet`.

    A label repeated for the same item, rater and field keeps its first value; a different
    second value is an issue.
    """
    config = config or default_config()
    issues: list[ParseIssue] = []
    labels: list[dict[str, Any]] = []
    items: dict[str, int] = {}
    for raw_path in paths:
        path = Path(raw_path)
        if path.suffix not in _READERS:
            raise LabelError(f"{path}: labels must be .csv, .jsonl or .parquet")
        if not path.is_file():
            raise LabelError(f"{path}: no such file")
        reader = _RowReader(str(path), config, issues)
        for number, row in read_rows(path, issues):
            reader.add(number, row)
        for label in reader.labels:
            label["file"] = str(path)
        labels.extend(reader.labels)
        items.update(reader.items)
    frame = (
        pl.DataFrame(labels, schema=_LABELS_SCHEMA)
        if labels
        else pl.DataFrame(schema=_LABELS_SCHEMA)
    )
    frame = _drop_conflicts(frame, issues)
    items_frame = pl.DataFrame(
        {"item_id": list(items), "redundant_calls": list(items.values())}, schema=_ITEMS_SCHEMA
    )
    return LabelSet(frame, config, issues, items_frame)


def _drop_conflicts(frame: pl.DataFrame, issues: list[ParseIssue]) -> pl.DataFrame:
    key = ["item_id", "rater", "field"]
    numbered = frame.with_row_index("row")
    first = numbered.unique(subset=key, keep="first", maintain_order=True)
    if first.height == frame.height:
        return frame
    kept = first.select(*key, pl.col("value").alias("kept"))
    repeats = (
        numbered.join(first.select("row"), on="row", how="anti")
        .join(kept, on=key)
        .filter(pl.col("value") != pl.col("kept"))
    )
    for row in repeats.iter_rows(named=True):
        issues.append(
            ParseIssue(
                file=row["file"],
                line=row["line"],
                reason=f"{row['rater']} labelled {row['field']} of {row['item_id']} again "
                f"as {row['value']!r} (kept {row['kept']!r})",
            )
        )
    return first.drop("row")
