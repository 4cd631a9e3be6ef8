"""Labels from several raters on the same items, and the configuration that gives them meaning.

Labels come in long form (``item_id, rater, rater_kind, field, value``) or wide form (one row
per item and rater, one column per field) as CSV, JSON Lines or Parquet. Every bad row becomes
a :class:`ParseIssue` naming its file and line; every valid row is kept.
"""

from __future__ import annotations

import csv
import io
import json
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
import polars as pl
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from analysis.ingest._jsonio import first_error, iter_jsonl
from analysis.models import ParseIssue

RaterKind = Literal["llm", "council", "human", "adjudicator"]
RATER_KINDS: tuple[str, ...] = ("llm", "council", "human", "adjudicator")
LONG_COLUMNS = ("item_id", "rater", "rater_kind", "field", "value")
ID_COLUMNS = ("item_id", "rater", "rater_kind")
# Columns of a wide file that describe the item rather than a label.
ITEM_COLUMNS = ("redundant_calls", "session_id")
LABEL_SUFFIXES = (".csv", ".jsonl", ".parquet")
BUILTIN_CAUSES = ("severity_shift", "definition_mismatch", "schema_gap", "human_error")


class LabelError(Exception):
    """A labels file or config that cannot be used at all; the message is one line."""


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldSpec(_Config):
    """One labelled field: its vocabulary, whether it is ordered, and schema mappings.

    ``schema_mapping`` maps a value to the coarser value one side uses for it (humans who
    collapse ``slightly_over`` into ``wasteful``: ``{"slightly_over": "wasteful"}``); two
    labels equal under the mapping disagree only by a schema gap.
    """

    name: str
    kind: Literal["ordinal", "nominal"] = "nominal"
    values: list[str] = Field(default_factory=list)
    schema_mapping: dict[str, str] = Field(default_factory=dict)
    description: str = ""

    @model_validator(mode="after")
    def _check(self) -> FieldSpec:
        if self.kind == "ordinal" and len(self.values) < 2:
            raise ValueError(f"ordinal field {self.name!r} needs its values in order")
        unknown = set(self.schema_mapping) | set(self.schema_mapping.values())
        unknown -= set(self.values)
        if self.values and unknown:
            raise ValueError(f"schema_mapping of {self.name!r} names unknown {sorted(unknown)}")
        return self

    def mapped(self, value: str) -> str:
        return self.schema_mapping.get(value, value)

    def rank(self, value: str) -> int | None:
        """Position in the ordinal scale, None for nominal fields and unknown values."""
        if self.kind != "ordinal" or value not in self.values:
            return None
        return self.values.index(value)


class HigherScore(_Config):
    """Take the label higher on the ordinal scale."""

    kind: Literal["higher_score"] = "higher_score"


class PreferSide(_Config):
    """Take one side's label."""

    kind: Literal["prefer"] = "prefer"
    side: Literal["human", "council"]


class HumanUnlessRedundant(_Config):
    """Take the human's ``value`` unless ``min_redundant`` clearly redundant calls are visible.

    A redundant call repeats an earlier call of the same tool with the same arguments. With
    that many, the council's label stands.
    """

    kind: Literal["human_unless_redundant"] = "human_unless_redundant"
    value: str = "appropriate_use"
    min_redundant: int = Field(default=2, ge=1)


class NoRule(_Config):
    """No rule: every disagreement goes to an adjudicator unaided."""

    kind: Literal["none"] = "none"


Rule = Annotated[
    HigherScore | PreferSide | HumanUnlessRedundant | NoRule, Field(discriminator="kind")
]


class CouncilSpec(_Config):
    """Stage-1 judges (one rater each) and the chairman whose label is the council's.

    Left empty, stage-1 judges are the raters of kind ``llm`` and the chairman the rater of
    kind ``council``.
    """

    stage1: list[str] = Field(default_factory=list)
    chairman: str | None = None


class LabelConfig(_Config):
    """Fields, council and reconciliation rules; read from TOML or JSON by :func:`read_config`."""

    fields: list[FieldSpec]
    council: CouncilSpec = Field(default_factory=CouncilSpec)
    rules: dict[str, Rule] = Field(default_factory=dict)
    causes: list[str] = Field(default_factory=list, description="user-defined causes")

    @model_validator(mode="after")
    def _check(self) -> LabelConfig:
        names = [spec.name for spec in self.fields]
        if len(set(names)) != len(names):
            raise ValueError("a field is declared twice")
        for name, rule in self.rules.items():
            spec = self.field(name)
            if isinstance(rule, HigherScore) and (spec is None or spec.kind != "ordinal"):
                raise ValueError(f"rule higher_score needs {name!r} declared as ordinal")
            covered = spec.values if spec else []
            if isinstance(rule, HumanUnlessRedundant) and covered and rule.value not in covered:
                raise ValueError(f"rule value {rule.value!r} is not a value of {name!r}")
        return self

    def field(self, name: str) -> FieldSpec | None:
        return next((spec for spec in self.fields if spec.name == name), None)

    def rule(self, name: str) -> Rule:
        return self.rules.get(name, NoRule())

    @property
    def all_causes(self) -> list[str]:
        return [*BUILTIN_CAUSES, *(c for c in self.causes if c not in BUILTIN_CAUSES)]


def default_config() -> LabelConfig:
    """The four fields of the council-vs-human study and its reconciliation rules."""
    return LabelConfig(
        fields=[
            FieldSpec(
                name="task_completed",
                kind="ordinal",
                values=["not_completed", "partially_completed", "completed"],
                description="Did the agent finish the task the user asked for?",
            ),
            FieldSpec(
                name="efficiency_bucket",
                kind="ordinal",
                values=["efficient", "slightly_over", "wasteful"],
                schema_mapping={"slightly_over": "wasteful"},
                description="Tool calls spent against what the task needed.",
            ),
            FieldSpec(
                name="tool_policy",
                values=["appropriate_use", "unnecessary_use", "insufficient_use"],
                description="Did the agent use tools appropriately for the request?",
            ),
            FieldSpec(
                name="looped",
                values=["no", "yes"],
                description="Did the agent repeat the same steps without progress?",
            ),
        ],
        rules={
            "task_completed": HigherScore(),
            "tool_policy": HumanUnlessRedundant(),
            "efficiency_bucket": PreferSide(side="council"),
            "looped": NoRule(),
        },
    )


def read_config(path: str | Path) -> LabelConfig:
    """A :class:`LabelConfig` from a TOML or JSON file; :class:`LabelError` names what is wrong."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        data = json.loads(raw) if path.suffix == ".json" else tomllib.loads(raw.decode())
    except OSError as error:
        raise LabelError(f"{path}: cannot read ({error.strerror})") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise LabelError(f"{path}: not valid {path.suffix.lstrip('.').upper()} ({error})") from None
    try:
        return LabelConfig.model_validate(data)
    except ValidationError as error:
        raise LabelError(f"{path}: {first_error(error)}") from None


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


def _csv_rows(path: Path, issues: list[ParseIssue]) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        issues.append(ParseIssue(file=str(path), reason=f"not UTF-8 text ({error.reason})"))
        return
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        for row in reader:
            if None in row:
                issues.append(
                    ParseIssue(
                        file=str(path), line=reader.line_num, reason="more cells than columns"
                    )
                )
                continue
            yield reader.line_num, row
    except csv.Error as error:
        issues.append(ParseIssue(file=str(path), line=reader.line_num, reason=f"bad CSV ({error})"))


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
