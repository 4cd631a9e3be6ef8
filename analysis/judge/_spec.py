"""Judge specs: a judge a team can change, as a TOML file.

A spec names the model, the votes, the rubric (inline, or ``rubric_file`` beside the spec),
worked examples labelled by people, the condition and the step budget. Its ``judge_id`` is
its name plus a hash of everything that changes what the model is asked, so judgments of two
specs never merge, and a spec file's comments or layout never change it.

What a spec cannot change is the contract the rest of the product depends on: the verdict is
given through the forced ``record_verdict`` tool, and the menu comes first in every request,
ending in a cache breakpoint. A spec changes the words and the examples only.

A spec may come from someone else, so reading one reads nothing but what sits beside it: its
``rubric_file`` must resolve inside the spec's folder (``..`` and symlinks resolved first) and
be a regular file, and the spec and its rubric are read only up to a stated size. Values are
taken as written: ``votes = true`` or ``votes = "3"`` is refused, not turned into a number.
"""

from __future__ import annotations

import errno
import hashlib
import importlib.resources
import json
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from analysis._jsonio import first_error
from analysis.models import Condition
from analysis.render import DEFAULT_STEP_CHARS, RenderOptions

if TYPE_CHECKING:
    from analysis.judge._chainpoll import JudgeConfig

MAX_SPEC_BYTES = 1_000_000
"""The largest spec file read (its worked examples included)."""
MAX_RUBRIC_BYTES = 200_000
"""The largest ``rubric_file`` read: some 50,000 tokens, far more than a rubric needs."""
MAX_EXAMPLES = 200
"""The most worked examples a spec may hold: each is in every request."""
DEFAULT_SPEC_FILE = "default.judge.toml"
"""The built-in judge, shipped in ``analysis/data/judges/`` for users to copy."""
EXAMPLES_HEADING = "Worked examples, labelled by people"


class JudgeSpecError(ValueError):
    """A spec that cannot be used, in one sentence naming its file."""


class JudgeExample(BaseModel):
    """A labelled step shown to the judge as a worked example: what it saw, what people said."""

    model_config = ConfigDict(extra="forbid", strict=True)

    step: str = Field(min_length=1)
    """The step as the judge reads it (the ask, the turn so far, the call), shortened."""
    label: Literal["correct", "incorrect"]
    reason: str = ""
    item_id: str | None = None
    """The labelled step it came from, where it came from one (a dev-split item)."""


class JudgeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(min_length=1)
    model: str = Field(min_length=1)
    """``provider:model`` (``openai:gpt-4o``); a bare id or display name is Anthropic's."""
    base_url: str | None = None
    votes: int = Field(default=3, ge=1, le=10)
    rubric: str = Field(min_length=1)
    examples: list[JudgeExample] = Field(default_factory=list)
    condition: Condition = "full"
    step_chars: int = Field(default=DEFAULT_STEP_CHARS, ge=2000)
    parent: str | None = None
    """The ``judge_id`` of the spec this one was derived from (a proposal, examples added)."""

    @field_validator("rubric")
    @classmethod
    def _stripped(cls, rubric: str) -> str:
        return rubric.strip()

    @property
    def judge_id(self) -> str:
        """``name#hash``: the hash covers what the model is asked (rubric, examples, model,
        votes, condition, step budget), not the file's comments, name or endpoint."""
        asked = {
            "rubric": self.rubric,
            "examples": [e.model_dump(exclude={"item_id"}) for e in self.examples],
            "model": self.model,
            "votes": self.votes,
            "condition": self.condition,
            "step_chars": self.step_chars,
        }
        canonical = json.dumps(asked, sort_keys=True, ensure_ascii=False).encode()
        return f"{self.name}#{hashlib.sha256(canonical).hexdigest()[:10]}"

    def system_text(self) -> str:
        """The judge's instructions: the rubric, then the worked examples, if any."""
        if not self.examples:
            return self.rubric
        shown = "\n\n".join(
            f"### Example {number}\n{example.step.strip()}\n"
            f"People's label: {example.label}"
            + (f" (reason: {example.reason.strip()})" if example.reason.strip() else "")
            for number, example in enumerate(self.examples, start=1)
        )
        return f"{self.rubric.rstrip()}\n\n## {EXAMPLES_HEADING}\n\n{shown}"

    def judge_config(self, **settings: Any) -> JudgeConfig:
        """The run's settings for this spec; ``settings`` are the run's own (key, concurrency,
        cache folder, timeout), which change nothing the model is asked."""
        from analysis.judge._chainpoll import JudgeConfig

        return JudgeConfig(
            model=self.model,
            votes=self.votes,
            base_url=self.base_url,
            system=self.system_text(),
            judge_ids={c: self.with_changes(condition=c).judge_id for c in get_args(Condition)},
            spec_name=self.name,
            **settings,
        )

    def render_options(self) -> RenderOptions:
        return RenderOptions(step_chars=self.step_chars)

    def with_changes(self, **changes: object) -> JudgeSpec:
        """A copy with fields changed and validated (``--model`` over a spec's model, …)."""
        return JudgeSpec.model_validate({**self.model_dump(), **changes})


class _SpecFile(JudgeSpec):
    """A spec as written: ``rubric`` inline, or ``rubric_file`` beside the spec."""

    rubric: str = ""
    rubric_file: str | None = None

    @model_validator(mode="after")
    def _one_rubric(self) -> _SpecFile:
        if bool(self.rubric) == bool(self.rubric_file):
            raise ValueError("give exactly one of rubric and rubric_file")
        return self


def _bounded_text(path: Path, limit: int, subject: str, inside: Path | None = None) -> str:
    """The UTF-8 text of ``path``, a regular file of at most ``limit`` bytes, else a
    JudgeSpecError saying ``subject`` (the file as the user knows it) and what is wrong.

    The file is opened once and checked as opened (a FIFO or a device is never waited on);
    with ``inside``, a link is not followed and the opened file must lie inside that folder,
    so a file swapped for a link while it is read is refused too."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if inside is not None:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise JudgeSpecError(f"{subject} is a link, so it is not read") from None
        raise JudgeSpecError(f"{subject} cannot be read ({error.strerror})") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise JudgeSpecError(f"{subject} is not a regular file")
    with os.fdopen(descriptor, "rb") as handle:
        if inside is not None and not _opened_inside(handle.fileno(), inside):
            raise JudgeSpecError(f"{subject} is outside the spec's folder, so it is not read")
        try:
            data = handle.read(limit + 1)
        except OSError as error:
            raise JudgeSpecError(f"{subject} cannot be read ({error.strerror})") from None
    if len(data) > limit:
        raise JudgeSpecError(f"{subject} is larger than {limit:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise JudgeSpecError(f"{subject} is not UTF-8 text") from None


def _opened_inside(descriptor: int, folder: Path) -> bool:
    """Whether the file open as ``descriptor`` lies inside ``folder`` (where the system says
    which file a descriptor is: Linux's ``/proc/self/fd``; elsewhere the path check stands)."""
    try:
        opened = Path(os.readlink(f"/proc/self/fd/{descriptor}"))
    except OSError:
        return True
    return opened.is_relative_to(folder)


def read_spec(path: str | Path) -> JudgeSpec:
    """A spec from its TOML file; anything wrong is a JudgeSpecError naming the file."""
    source = Path(path)
    text = _bounded_text(source, MAX_SPEC_BYTES, f"The judge spec {source}")
    return spec_from_text(text, str(source), source.parent)


def _rubric_beside(folder: Path, written: str, name: str) -> str:
    """The rubric file ``written`` inside ``folder`` (``..`` and symlinks resolved first), and
    not hidden: no part of its path inside the folder starts with a dot (``.ssh/…``, ``.env``)."""
    subject = f"{name}: its rubric_file {written}"
    try:
        inside = folder.resolve()
        target = (folder / written).resolve()
    except (OSError, RuntimeError):  # a loop of links, a folder gone
        raise JudgeSpecError(f"{subject} cannot be read (its path cannot be resolved)") from None
    if not target.is_relative_to(inside):
        raise JudgeSpecError(f"{subject} is outside the spec's folder, so it is not read")
    if any(part.startswith(".") for part in target.relative_to(inside).parts):
        raise JudgeSpecError(f"{subject} is a hidden file, so it is not read")
    return _bounded_text(target, MAX_RUBRIC_BYTES, subject, inside)


def _line_of(text: str, location: tuple[int | str, ...]) -> int | None:
    """The line of ``text`` where the value at ``location`` (a top-level key, or a key of the
    N-th ``[[examples]]``) is written, if it can be found."""
    if not location:
        return None
    lines = text.splitlines()
    start, key = 0, location[0]
    if location[0] == "examples" and len(location) >= 3 and isinstance(location[1], int):
        tables = [i for i, line in enumerate(lines) if line.strip() == "[[examples]]"]
        if location[1] >= len(tables):
            return None
        start, key = tables[location[1]] + 1, location[2]
    pattern = re.compile(rf"^\s*[\"']?{re.escape(str(key))}[\"']?\s*=")
    for number in range(start, len(lines)):
        if lines[number].lstrip().startswith("["):  # the next table: not written in this one
            return None
        if pattern.match(lines[number]):
            return number + 1
    return None


def uploaded_spec(name: str, data: bytes) -> JudgeSpec:
    """A spec uploaded as ``data`` (its size checked before it is decoded or parsed); its
    rubric must be inline. Anything wrong is a JudgeSpecError naming ``name``."""
    if len(data) > MAX_SPEC_BYTES:
        raise JudgeSpecError(f"The judge spec {name} is larger than {MAX_SPEC_BYTES:,} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise JudgeSpecError(f"The judge spec {name} is not UTF-8 text") from None
    return spec_from_text(text, name)


def spec_from_text(text: str, name: str, folder: Path | None = None) -> JudgeSpec:
    """A spec from TOML text (an upload), errors naming it ``name`` (and the line, where a
    value is wrong); a ``rubric_file`` is read from ``folder`` only (None: an upload, which
    must hold its rubric inline)."""
    if len(text.encode("utf-8")) > MAX_SPEC_BYTES:
        raise JudgeSpecError(f"{name}: the spec is larger than {MAX_SPEC_BYTES:,} bytes")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise JudgeSpecError(f"{name}: not valid TOML ({error})") from None
    except RecursionError:
        raise JudgeSpecError(f"{name}: not valid TOML (nested too deeply)") from None
    if isinstance(data.get("examples"), list) and len(data["examples"]) > MAX_EXAMPLES:
        raise JudgeSpecError(f"{name}: more than {MAX_EXAMPLES} worked examples")
    try:
        written = _SpecFile.model_validate(data)
    except ValidationError as error:
        line = _line_of(text, tuple(error.errors()[0]["loc"]))
        at = f"{name}, line {line}" if line else name
        raise JudgeSpecError(f"{at}: not a judge spec ({first_error(error)})") from None
    fields = written.model_dump(exclude={"rubric_file"})
    if written.rubric_file:
        if folder is None:
            raise JudgeSpecError(
                f"{name}: its rubric_file {written.rubric_file} cannot be read (an uploaded "
                "spec must hold its rubric inline)"
            )
        fields["rubric"] = _rubric_beside(folder, written.rubric_file, name)
    try:
        return JudgeSpec.model_validate(fields)
    except ValidationError as error:
        raise JudgeSpecError(f"{name}: not a judge spec ({first_error(error)})") from None


def spec_toml(spec: JudgeSpec) -> str:
    """The spec as a TOML file (rubric inline), the form :func:`read_spec` reads."""
    import tomli_w

    data = spec.model_dump(exclude_none=True)
    data["examples"] = [
        {key: value for key, value in example.items() if value is not None}
        for example in data["examples"]
    ]
    if not data["examples"]:
        del data["examples"]
    return tomli_w.dumps(data, multiline_strings=True)


def default_spec_path() -> Path:
    """The built-in judge's spec file (``tsq-rubric/3``)."""
    return Path(str(importlib.resources.files("analysis") / "data" / "judges" / DEFAULT_SPEC_FILE))


def default_spec(model: str | None = None) -> JudgeSpec:
    """The built-in judge, with ``model`` over its own where given."""
    spec = read_spec(default_spec_path())
    return spec if model is None else spec.with_changes(model=model)
