"""Labelled Claude Code sessions on which a trained step scorer must learn stated rules.

:func:`write_labelled_sessions` writes realistic Claude Code transcripts (the records the CLI
writes, built with :mod:`records`: one content block a line, tool results, a subagent's own
file, errors among the results) and a file labelling every step of them, the labeller
``alice`` following these rules, and only these:

1. A content search with ``grep``, ``rg`` or ``egrep`` inside ``Bash`` while the ``Grep``
   tool is on the menu is **incorrect**: ``grep -rn retry src/``, ``cd src && rg -i token``,
   ``egrep -l 'a|b' lib/x.rb | head``, ``find . -name '*.go' | xargs grep -n Foo``,
   ``find src -exec grep -l foo {} +``. A ``grep`` that filters another command's output
   (``pytest -q 2>&1 | grep FAILED``, ``git log --oneline | grep -i fix``) searches no
   content: rule 3. Every session written here runs a Claude Code version whose menu has
   ``Grep``.
2. A ``WebSearch`` about the repository's own state is **incorrect**: "what changed in the
   latest commit of this repo", "current branch of my repository", "is there a TODO in our
   codebase about invoices" (a query that speaks of this/my/our repo, repository, codebase,
   code, project, working tree or checkout, or of the current branch).
3. Everything else is **correct**: ``Bash`` running tests, builds, linters or git, the
   ``Grep`` tool's searches, ``Read``, ``Glob``, ``Edit``, ``Write``, ``TodoWrite``, ``Task``
   (and its subagent's steps, judged by the same rules), and ``WebSearch`` about outside facts
   (a library's docs, an error message, release notes).

A step (one assistant response that called tools) is incorrect when any of its calls is.
:func:`rule_label` is the rule for one call; the generator labels with it.

Steps are varied so that a scorer has to learn the rules rather than the data: 19 kinds of
ask in six languages, file names and identifiers drawn per session, grep/rg/egrep commands of
many shapes (flags, ``--include``, pipes, ``cd ... &&``, ``xargs``, ``-exec``, quoting), and no
command or query string used in two sessions. Some sessions break no rule at all.

The labels file lies in the hidden folder ``.labels`` of the sessions folder, where the
loader, which skips hidden files and folders, does not read it as a transcript.
"""

from __future__ import annotations

import json
import random
import re
import shlex
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from records import assistant, result, text, tool_use, user

LABELLER = "alice"
LABELS_FILE = Path(".labels") / "steps.jsonl"
"""Where the labels are written, relative to the sessions folder."""
VERSIONS = ("2.1.39", "2.1.38", "2.1.34", "2.1.31")
"""Claude Code versions written in the records; each one's built-in menu has Grep, Bash,
WebSearch, Read, Glob and Edit."""
MODELS = ("claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101")

BASH_SEARCH_REASON = "content search with grep/rg/egrep in Bash while the Grep tool is on the menu"
REPO_SEARCH_REASON = "WebSearch about the repository's own state, which the web cannot know"
CORRECT_REASON = "a fitting tool for this step"
CLEAN_SHARE = 0.12
"""The share of sessions that break no rule."""
WRONG_EARLY, WRONG_LATE = 0.62, 0.35
"""In a session that breaks rules, how likely a step breaks one in the first half of its turn
(searching) and in the second (editing and testing)."""

# -- the rules ----------------------------------------------------------------------------------

_SEARCHERS = frozenset({"grep", "rg", "egrep"})
_PIPES = frozenset({"|", "|&"})
_BREAKS = frozenset({"&&", "||", ";", "&", "(", ")", ";;"})
_WRAPPERS = frozenset({"sudo", "time", "command", "nice", "nohup", "env"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_REPO_STATE = re.compile(
    r"\b(?:this|my|our)\s+(?:own\s+|local\s+)?"
    r"(?:repo|repository|codebase|code|project|working tree|checkout)\b"
    r"|\bcurrent branch\b",
    re.IGNORECASE,
)


def _shell_words(command: str) -> list[str]:
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:  # unbalanced quotes: words as the spaces split them
        return command.split()


def searches_content(command: str) -> bool:
    """Whether a shell command searches file contents with grep, rg or egrep: one of them
    runs as a command that is not fed by a pipe (or runs under ``xargs`` or ``find -exec``,
    which hand it file names)."""
    expect_command, piped, fed = True, False, False
    for word in _shell_words(command):
        if word in _PIPES:
            expect_command, piped, fed = True, True, False
        elif word in _BREAKS:
            expect_command, piped, fed = True, False, False
        elif set(word) <= set("<>&|;()"):
            continue  # a redirection
        elif word == "-exec":
            expect_command, fed = True, True
        elif expect_command:
            name = word.rsplit("/", 1)[-1]
            if _ASSIGNMENT.match(word) or name in _WRAPPERS or (fed and word.startswith("-")):
                continue
            if name == "xargs":
                fed = True
                continue
            expect_command = False
            if name in _SEARCHERS and (fed or not piped):
                return True
    return False


def asks_about_repository(query: str) -> bool:
    """Whether a web search query asks about the user's own repository's state."""
    return _REPO_STATE.search(query) is not None


def rule_label(tool: str, command_or_query: str) -> str:
    """The stated rules for one call: ``incorrect`` for a content search with grep, rg or
    egrep in ``Bash`` (the Grep tool being on the menu) and for a ``WebSearch`` about the
    repository's own state; ``correct`` for everything else."""
    if tool == "Bash" and searches_content(command_or_query):
        return "incorrect"
    if tool == "WebSearch" and asks_about_repository(command_or_query):
        return "incorrect"
    return "correct"


def call_text(name: str, arguments: dict[str, Any]) -> str:
    """What :func:`rule_label` reads of a call: a Bash command, a WebSearch query, else ''."""
    key = {"Bash": "command", "WebSearch": "query"}.get(name)
    value = arguments.get(key) if key else None
    return value if isinstance(value, str) else ""


def reason_for(name: str, arguments: dict[str, Any]) -> str:
    if rule_label(name, call_text(name, arguments)) == "correct":
        return CORRECT_REASON
    return BASH_SEARCH_REASON if name == "Bash" else REPO_SEARCH_REASON


# -- the world of one session -------------------------------------------------------------------

VERBS = (
    "load", "parse", "fetch", "build", "render", "retry", "resolve", "validate", "flush",
    "merge", "encode", "decode", "sync", "refresh", "schedule", "dispatch", "normalize",
    "compute", "apply", "register", "serialize", "hydrate", "reconcile", "throttle", "prune",
    "export", "emit", "collect", "check", "format", "archive", "compact", "expire", "lookup",
)  # fmt: skip
NOUNS = (
    "config", "session", "token", "user", "cache", "request", "payload", "invoice", "order",
    "schema", "widget", "account", "ledger", "queue", "worker", "report", "metric", "event",
    "webhook", "batch", "template", "cursor", "upload", "profile", "tenant", "price",
    "shipment", "permission", "snapshot", "bucket", "channel", "quota", "header", "route",
    "coupon", "invite", "audit", "refund", "locale", "digest",
)  # fmt: skip
SUFFIXES = ("Manager", "Client", "Service", "Store", "Handler", "Parser", "Builder", "Registry")
PROJECT_HEADS = (
    "atlas", "orbit", "nimbus", "harbor", "quill", "ember", "lumen", "cobalt", "pylon",
    "vertex", "sparrow", "juniper", "basalt", "tundra", "meridian", "kestrel", "solace",
)  # fmt: skip
PROJECT_TAILS = ("api", "web", "cli", "sync", "core", "service", "dashboard", "worker", "sdk")
PEOPLE = ("sam", "priya", "marco", "lee", "ana", "tomasz", "yuki", "dev")
HOMES = ("code", "src", "work", "projects", "repos")
BRANCHES = ("main", "main", "develop", "feature/{noun}-{verb}", "fix/{verb}-{noun}")


@dataclass(frozen=True)
class Language:
    name: str
    ext: str
    rg_type: str
    style: str  # snake, camel or pascal
    source_dirs: tuple[str, ...]
    test_dir: str
    test_name: str  # a format of the tested module's stem
    define: str  # how a function definition starts, a format of the identifier
    libs: tuple[str, ...]
    errors: tuple[str, ...]  # error messages, formats of {ident} and {noun}
    test_cmds: tuple[str, ...]  # formats of {test}, {ident}, {dir}, {n}
    build_cmds: tuple[str, ...]
    filters: tuple[str, ...]  # a build or test run whose output a grep filters


LANGUAGES = (
    Language(
        "Python", "py", "py", "snake", ("src/{pkg}", "src/{pkg}/{sub}", "{pkg}"), "tests",
        "test_{stem}.py", "def {ident}",
        ("pydantic", "fastapi", "sqlalchemy", "pytest", "httpx", "celery", "click", "attrs"),
        (
            "TypeError: Object of type {Noun} is not JSON serializable",
            "AttributeError: 'NoneType' object has no attribute '{ident}'",
            "sqlalchemy.orm.exc.DetachedInstanceError: Instance <{Noun} at 0x7f3a> is not bound",
            "ModuleNotFoundError: No module named '{noun}_utils'",
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for {Noun}",
        ),
        (
            "pytest {test} -q", "python -m pytest {test}::test_{ident} -x", "pytest -k {ident} -q",
            "pytest {dir} -q --tb=short -x", "uv run pytest {test} -q -p no:cacheprovider",
        ),
        ("ruff check {file}", "mypy {dir}", "python -m compileall -q {dir}", "ruff format {file}"),
        ("pytest {test} -q 2>&1 | grep -E 'FAILED|ERROR'", "pip list 2>/dev/null | grep -i {lib}"),
    ),
    Language(
        "TypeScript", "ts", "ts", "camel", ("src/{pkg}", "src/{pkg}/{sub}", "packages/{pkg}/src"),
        "src/__tests__", "{stem}.test.ts", "function {ident}",
        ("zod", "prisma", "express", "vitest", "react-query", "axios", "next.js", "fastify"),
        (
            "TypeError: Cannot read properties of undefined (reading '{ident}')",
            "TS2339: Property '{ident}' does not exist on type '{Noun}'",
            "Cannot find module '@/{noun}/{ident}' or its corresponding type declarations",
            "ReferenceError: {ident} is not defined",
            "TS2345: Argument of type 'string' is not assignable to parameter of type '{Noun}Id'",
        ),
        (
            "npx vitest run {test}", "npm test -- {test}", "npx jest {test} -t {ident}",
            "pnpm vitest run {dir} --reporter=dot", "npm run test:unit -- --grep {ident}",
        ),
        ("npx tsc --noEmit -p {dir}", "npx eslint {file}", "npm run build", "pnpm -r build"),
        ("npx tsc --noEmit 2>&1 | grep {stem}", "npm test 2>&1 | grep -i fail | head -{n}"),
    ),
    Language(
        "Go", "go", "go", "pascal", ("internal/{pkg}", "pkg/{pkg}", "internal/{pkg}/{sub}"),
        "internal/{pkg}", "{stem}_test.go", "func {ident}",
        ("cobra", "gin", "gorm", "testify", "errgroup", "sqlx", "zap", "viper"),
        (
            "panic: assignment to entry in nil map {ident}",
            "undefined: {ident}",
            "cannot use {noun} (variable of type *{Noun}) as {Noun} value in argument",
            "runtime error: invalid memory address or nil pointer dereference {Noun}",
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers) {noun}",
        ),
        (
            "go test ./{dir}/...", "go test -run Test{ident} ./{dir}", "go test -count=1 ./{dir}",
            "go test -race -run {ident} ./{dir}/...", "go test -v ./{dir} -run Test{ident}",
        ),
        ("go vet ./{dir}/...", "go build ./...", "gofmt -l {dir}", "staticcheck ./{dir}/..."),
        ("go test ./... 2>&1 | grep -v '^ok' | head -{n}", "go build ./... 2>&1 | grep {stem}"),
    ),
    Language(
        "Rust", "rs", "rust", "snake", ("src", "src/{pkg}", "crates/{pkg}/src"), "tests",
        "{stem}_tests.rs", "fn {ident}",
        ("tokio", "serde", "clap", "anyhow", "reqwest", "axum", "sqlx", "thiserror"),
        (
            "error[E0502]: cannot borrow `{ident}` as mutable because it is also borrowed",
            "error[E0382]: borrow of moved value: `{noun}`",
            "error[E0277]: `{Noun}` doesn't implement `std::fmt::Display`",
            "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value' {ident}",
            "error[E0433]: failed to resolve: use of undeclared type `{Noun}`",
        ),
        (
            "cargo test {ident}", "cargo test --test {stem}_tests", "cargo test -p {pkg} {ident}",
            "cargo nextest run {ident}", "cargo test {ident} -- --nocapture",
        ),
        ("cargo build", "cargo clippy -p {pkg} -- -D warnings", "cargo check --all-targets"),
        ("cargo build 2>&1 | grep -A{n} warning", "cargo test 2>&1 | grep -E '^test .*FAILED'"),
    ),
    Language(
        "Java", "java", "java", "camel",
        ("src/main/java/com/{org}/{pkg}", "src/main/java/com/{org}/{pkg}/{sub}"),
        "src/test/java/com/{org}/{pkg}", "{Stem}Test.java", "public void {ident}",
        ("spring boot", "junit 5", "jackson", "hibernate", "mockito", "lombok", "gradle"),
        (
            "java.lang.NullPointerException: Cannot invoke \"{Noun}.{ident}()\" because it is null",
            "org.hibernate.LazyInitializationException: failed to lazily initialize {noun}s",
            "com.fasterxml.jackson.databind.exc.InvalidDefinitionException: {Noun}",
            "java.lang.IllegalStateException: Failed to load ApplicationContext {Noun}Test",
        ),
        (
            "./gradlew test --tests '*{Stem}Test'", "mvn -q test -Dtest={Stem}Test",
            "./gradlew test --tests '*{Stem}Test.{ident}'", "mvn -q -pl {pkg} test",
        ),
        ("./gradlew build -x test", "mvn -q compile", "./gradlew spotlessApply"),
        ("./gradlew test 2>&1 | grep -B{n} FAILED", "mvn -q test 2>&1 | grep ERROR | head"),
    ),
    Language(
        "Ruby", "rb", "ruby", "snake", ("app/models", "app/services", "lib/{pkg}"), "spec",
        "{stem}_spec.rb", "def {ident}",
        ("rails", "rspec", "sidekiq", "devise", "activerecord", "rubocop", "pundit"),
        (
            "NoMethodError: undefined method `{ident}' for nil:NilClass",
            "ActiveRecord::RecordNotUnique: PG::UniqueViolation {noun}s",
            "NameError: uninitialized constant {Noun}",
            "ActiveRecord::PendingMigrationError {noun}",
        ),
        (
            "bundle exec rspec {test}", "bundle exec rspec {test} -e {ident}",
            "bin/rails test {test}", "bundle exec rspec {dir} --fail-fast",
        ),
        ("bundle exec rubocop {file}", "bin/rails db:migrate", "bundle exec rake build"),
        ("bundle exec rspec 2>&1 | grep -A{n} Failures", "bundle list | grep -i {lib}"),
    ),
)  # fmt: skip


def _camel(*words: str) -> str:
    return words[0] + "".join(w.capitalize() for w in words[1:])


@dataclass
class World:
    """One session's project: its language, files and names."""

    rng: random.Random
    lang: Language
    project: str
    cwd: str
    branch: str
    pkg: str
    org: str
    files: list[str]
    tests: list[str]
    idents: list[str]
    classes: list[str]
    nouns: list[str]

    def ident(self) -> str:
        return self.rng.choice(self.idents)

    def cls(self) -> str:
        return self.rng.choice(self.classes)

    def noun(self) -> str:
        return self.rng.choice(self.nouns)

    def file(self) -> str:
        return self.rng.choice(self.files)

    def test(self) -> str:
        return self.rng.choice(self.tests)

    def dir(self) -> str:
        return self.file().rsplit("/", 1)[0]

    def test_dir(self) -> str:
        return self.tests[0].rsplit("/", 1)[0]

    def path(self, relative: str) -> str:
        return f"{self.cwd}/{relative}"

    def lib(self) -> str:
        return self.rng.choice(self.lang.libs)


def _name(lang: Language, verb: str, noun: str) -> str:
    if lang.style == "snake":
        return f"{verb}_{noun}"
    if lang.style == "pascal":
        return verb.capitalize() + noun.capitalize()
    return _camel(verb, noun)


def make_world(rng: random.Random) -> World:
    lang = rng.choice(LANGUAGES)
    project = f"{rng.choice(PROJECT_HEADS)}-{rng.choice(PROJECT_TAILS)}"
    cwd = f"/home/{rng.choice(PEOPLE)}/{rng.choice(HOMES)}/{project}"
    nouns = rng.sample(NOUNS, 8)
    verbs = rng.sample(VERBS, 8)
    pkg = rng.choice(nouns[:3]) + rng.choice(("", "s", "_core", "kit"))
    if lang.style != "snake":
        pkg = pkg.replace("_", "")
    sub = nouns[3]
    org = rng.choice(("acme", "northwind", "globex", "initech", "umbrella"))
    dirs = [d.format(pkg=pkg, sub=sub, org=org) for d in lang.source_dirs]
    files = []
    for noun in nouns[:6]:
        stem = noun.capitalize() + rng.choice(SUFFIXES) if lang.name == "Java" else noun
        if lang.name != "Java" and rng.random() < 0.4:
            stem = f"{noun}_{rng.choice(('store', 'client', 'utils', 'handler', 'models'))}"
            if lang.style != "snake":
                stem = _camel(*stem.split("_")) if lang.name == "TypeScript" else stem
        files.append(f"{rng.choice(dirs)}/{stem}.{lang.ext}")
    test_dir = lang.test_dir.format(pkg=pkg, org=org)
    tests = []
    for file in files[:4]:
        stem = file.rsplit("/", 1)[1].rsplit(".", 1)[0]
        tests.append(f"{test_dir}/{lang.test_name.format(stem=stem, Stem=stem)}")
    idents = [_name(lang, verb, noun) for verb, noun in zip(verbs, nouns, strict=True)]
    classes = [n.capitalize() + rng.choice(SUFFIXES) for n in nouns[:5]]
    branch = rng.choice(BRANCHES).format(noun=nouns[0], verb=verbs[0])
    return World(rng, lang, project, cwd, branch, pkg, org, files, tests, idents, classes, nouns)


# -- calls ---------------------------------------------------------------------------------------


@dataclass
class Call:
    """One tool call of a step: what the model sent and what came back."""

    name: str
    arguments: dict[str, Any]
    output: str
    is_error: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    """Fields of the result record beside its message (``toolUseResult``)."""
    subagent: list[Step] | None = None


@dataclass
class Step:
    calls: list[Call]
    preface: str = ""
    thinking: str = ""


class Exhausted(Exception):
    """No new command string could be made."""


class Generator:
    """Draws calls for one output: never the same command or query in two places."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(f"scorer-sessions:{seed}")
        self.used: set[str] = set()

    def unique(self, make: Callable[[], str]) -> str:
        for _ in range(200):
            candidate = make()
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate
        raise Exhausted

    # ids as Claude Code writes them

    def token(self, length: int) -> str:
        return "".join(self.rng.choices(string.ascii_letters + string.digits, k=length))

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    # -- rule 1: content searches with grep, rg or egrep in Bash --------------------------------

    def _pattern(self, w: World) -> tuple[str, bool]:
        """A search pattern and whether it is a regex with alternation or escapes."""
        rng = self.rng
        ident, cls, noun = w.ident(), w.cls(), w.noun()
        choices = [
            (ident, False),
            (f"{w.lang.define.format(ident=ident)}", False),
            (f"class {cls}", False),
            (f"{ident}\\(", True),
            (f"TODO|FIXME|XXX.*{noun}", True),
            (f"{noun.upper()}_{rng.choice(('TIMEOUT', 'URL', 'LIMIT', 'KEY', 'TTL'))}", False),
            (f"{cls}|{ident}", True),
            (f"import.*{noun}", True),
            (f"{noun}_id", False),
            (f"new {cls}", False),
            ("|".join(rng.sample(w.idents, 2)), True),
            (rng.choice(("deprecated", "@deprecated", "DeprecationWarning")) + f".*{noun}", True),
        ]
        return rng.choice(choices)

    def _quote(self, pattern: str, regex: bool) -> str:
        if " " in pattern or regex or any(c in pattern for c in "|()*$\\"):
            return self.rng.choice(("'{}'", '"{}"')).format(pattern)
        return self.rng.choice(("{}", "{}", "'{}'", '"{}"')).format(pattern)

    def _search_path(self, w: World) -> str:
        return self.rng.choice(
            (".", "src/", w.dir(), w.dir() + "/", w.file(), f"{w.dir()} {w.test_dir()}",
             w.test_dir(), "lib/", "app/", "./", w.file(), w.dir())
        )  # fmt: skip

    def _rg(self, w: World, pattern: str, quoted: str, path: str) -> str:
        lang = w.lang
        flags = self.rng.sample(
            ["-n", "-i", "-w", "-l", f"-t {lang.rg_type}", f"--type {lang.rg_type}",
             f"-g '*.{lang.ext}'", "-C 2", "-A3", "--no-heading", "-S", "--hidden",
             "-c", "-B 1", "--max-count 5", "-uu", f"--glob '!{w.test_dir()}'"],
            self.rng.randint(0, 3),
        )  # fmt: skip
        if "\\(" in pattern:
            flags.append(self.rng.choice(("-e", "--regexp")))
        return " ".join(["rg", *flags, quoted] + ([] if path == "." else [path]))

    def _grep(self, w: World, tool: str, pattern: str, quoted: str, path: str) -> str:
        rng, ext = self.rng, w.lang.ext
        if path.endswith(f".{ext}"):  # one file
            flags = [rng.choice(("-n", "-in", "-nw", "-c", "-n -A 4", "-nB2", "-o"))]
        else:
            flags = [
                rng.choice(
                    ("-r", "-R", "-rn", "-rni", "-Rn", "-rnw", "-rl", "-rli", "-rnI", "-rc",
                     "-rHn", "-r -n", "-R -i -n", "-rn --color=never")
                )
            ]  # fmt: skip
            if rng.random() < 0.45:
                flags.append(
                    rng.choice(
                        (f'--include="*.{ext}"', f"--include=*.{ext}", f"--include='*.{ext}'",
                         "--exclude-dir=node_modules", "--exclude-dir=.git",
                         "--exclude-dir={.git,vendor,target}")
                    )
                )  # fmt: skip
        if tool == "grep" and "|" in pattern:
            flags.append("-E")
        if rng.random() < 0.15:
            flags.append(rng.choice(("-m 3", "-A 2", "-B 3", "-C 1", "-s")))
        return " ".join([tool, *flags, quoted, path])

    def _shape(self, w: World, command: str, tool: str, quoted: str) -> str:
        """The search as part of a longer command line, or as it is."""
        rng, ext = self.rng, w.lang.ext
        shape = rng.random()
        if shape < 0.22:
            return command + rng.choice(
                (" | head", " | head -20", " | head -n 40", " | wc -l", " | sort | uniq -c",
                 " | sort -u", " | tail -15", " | cut -d: -f1 | sort -u", " | less -R")
            )  # fmt: skip
        if shape < 0.32:
            return command + rng.choice((" 2>/dev/null", " 2>/dev/null | head -30", " || true"))
        if shape < 0.44 and tool != "rg":
            flags = rng.choice(("-n", "-l", "-ln", "-in", "-Hn"))
            return rng.choice(
                (f"find {w.dir()} -name '*.{ext}' | xargs {tool} {flags} {quoted}",
                 f"find . -type f -name \"*.{ext}\" -exec {tool} {flags} {quoted} {{}} +",
                 f"find {w.dir()} -name '*.{ext}' -print0 | xargs -0 {tool} {flags} {quoted}",
                 f"{tool} {flags} {quoted} $(git ls-files '*.{ext}')")
            )  # fmt: skip
        if shape < 0.47:
            return f'{command}; echo "exit: $?"'
        return command

    def bash_search(self, w: World) -> Call:
        rng = self.rng

        searched: list[str] = []

        def make() -> str:
            pattern, regex = self._pattern(w)
            searched[:] = [pattern]
            quoted = self._quote(pattern, regex)
            path = self._search_path(w)
            where = None
            if rng.random() < 0.12:  # from inside a folder
                where, path = w.dir(), rng.choice((".", "./", w.file().rsplit("/", 1)[1]))
            tool = rng.choices(("grep", "rg", "egrep"), (55, 30, 15))[0]
            if tool == "rg":
                command = self._rg(w, pattern, quoted, path)
            else:
                command = self._grep(w, tool, pattern, quoted, path)
            command = self._shape(w, command, tool, quoted)
            return command if where is None else f"cd {where} && {command}"

        command = self.unique(make)
        about = _term(searched[0])
        description = rng.choice(
            (f"Search for {about}", f"Find usages of {about}", f"Look for {about} in the code",
             "Search the codebase", f"Find where {about} is used")
        )  # fmt: skip
        return self._bash_result(w, command, description, search=True, term=about)

    def _matches(self, w: World, count: int, term: str | None = None) -> list[str]:
        lines = []
        for _ in range(count):
            ident = term or w.ident()
            code = self.rng.choice(
                (f"{w.lang.define.format(ident=ident)}(", f"    result = {ident}({w.noun()})",
                 f"        return {ident}(self.{w.noun()})", f"    # TODO: {ident} {w.noun()}",
                 f"import {{ {ident} }} from './{w.noun()}'", f"  {ident}({w.noun()}, opts)")
            )  # fmt: skip
            lines.append(f"{w.file()}:{self.rng.randint(3, 480)}:{code}")
        return lines

    def _bash_result(
        self, w: World, command: str, description: str, search: bool, term: str | None = None
    ) -> Call:
        rng = self.rng
        arguments: dict[str, Any] = {"command": command, "description": description}
        if rng.random() < 0.06:
            arguments["timeout"] = rng.choice((60000, 120000, 300000))
        roll = rng.random()
        if search:
            out, error = self._search_output(w, command, roll, term)
        else:
            out, error = self._run_output(w, command, roll)
        extra = {
            "toolUseResult": (
                f"Error: {out}"
                if error
                else {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
            )
        }
        return Call("Bash", arguments, out, error, extra)

    def _search_output(
        self, w: World, command: str, roll: float, term: str | None
    ) -> tuple[str, bool]:
        rng = self.rng
        words = _shell_words(command)
        tool = next((word for word in words if word in _SEARCHERS), "grep")
        if tool == "rg" and roll < 0.07:
            return "Exit code 127\n/bin/bash: line 1: rg: command not found", True
        if roll < 0.2:
            return "Exit code 1", True
        if roll < 0.26:
            paths = [word for word in words if "/" in word and not word.startswith("/dev")]
            missing = paths[-1] if paths else rng.choice(("lib/", "app/", "src/"))
            suffix = " (os error 2)" if tool == "rg" else ""
            return f"Exit code 2\n{tool}: {missing}: No such file or directory{suffix}", True
        if "wc" in words or "-c" in words or "-rc" in words:
            return str(rng.randint(1, 60)), False
        if any(flag in words for flag in ("-l", "-rl", "-rli", "-ln")) or "cut" in words:
            return "\n".join(sorted({w.file() for _ in range(rng.randint(1, 5))})), False
        return "\n".join(self._matches(w, rng.randint(1, 9), term)), False

    def _run_output(self, w: World, command: str, roll: float) -> tuple[str, bool]:
        rng = self.rng
        file = w.file()
        stem = file.rsplit("/", 1)[1].rsplit(".", 1)[0]
        values = {
            "p": rng.randint(3, 140), "f": rng.randint(1, 3), "t": f"{rng.uniform(0.2, 9):.2f}",
            "test": w.test(), "ident": w.ident(), "noun": w.noun(), "Noun": w.noun().capitalize(),
            "org": w.org, "project": w.project, "dir": w.dir(), "stem": stem,
            "Stem": stem[0].upper() + stem[1:],
        }  # fmt: skip
        words = _shell_words(command)
        if words[0] == "git":
            return self._git_output(w, words), False
        if "|" in words:  # a run whose output a grep filters
            if roll < 0.3:
                return "Exit code 1", True
            return self._filtered_output(w, words), False
        if words[0] == "wc":
            counts = [rng.randint(20, 900) for _ in words[2:]]
            lines = [f"  {n} {name}" for n, name in zip(counts, words[2:], strict=True)]
            return "\n".join([*lines, f"  {sum(counts)} total"]), False
        if words[0] == "ls":
            names = sorted({w.file().rsplit("/", 1)[1] for _ in range(rng.randint(2, 6))})
            return "\n".join(
                f"-rw-r--r--  1 {w.cwd.split('/')[2]} staff  {rng.randint(200, 9000)} Jan 12 "
                f"10:{rng.randint(10, 59)} {name}"
                for name in names
            ), False
        if any(word in command for word in ("test", "rspec", "jest", "nextest")):
            passed, failed = TEST_OUTPUTS[w.lang.name]
            if roll < 0.3:
                return "Exit code 1\n" + failed.format(**values), True
            return passed.format(**values), False
        if roll < 0.15:
            return (
                f"Exit code {rng.choice((1, 2))}\n{file}:{rng.randint(2, 300)}:"
                f"{rng.randint(1, 40)}: error: {w.ident()} is not defined"
            ), True
        return rng.choice(("", "All checks passed!", "Done.", "ok", "")), False

    def _filtered_output(self, w: World, words: list[str]) -> str:
        rng = self.rng
        if "list" in words:
            lib = words[words.index("-i") + 1] if "-i" in words else w.lib()
            return f"{lib} ({rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)})"
        if "ps" in words:
            return f"{w.project}-{w.noun()}-1   Up {rng.randint(2, 50)} minutes   0.0.0.0:5432"
        if "--name-only" in words:
            return "\n".join(sorted({w.file() for _ in range(rng.randint(1, 3))}))
        command = " ".join(words).lower()
        kind = next((k for k in ("log", "warn", "fail") if k in command), "error")
        return "\n".join(self._filtered_line(w, kind) for _ in range(rng.randint(1, 4)))

    def _filtered_line(self, w: World, kind: str) -> str:
        where = f"{w.file()}:{self.rng.randint(2, 300)}"
        return {
            "log": f"{self.rng.getrandbits(28):07x} Fix {w.noun()} {w.ident()}",
            "warn": f"{where}: warning: unused `{w.noun()}`",
            "fail": f"FAILED {w.test()} {w.ident()}",
            "error": f"{where}: error: cannot find {w.ident()}",
        }[kind]

    def _git_output(self, w: World, words: list[str]) -> str:
        rng = self.rng
        file = w.file()
        if "commit" in words:
            return f"[{w.branch} {rng.getrandbits(28):07x}] Update {w.ident()}\n 2 files changed"
        if "log" in words:
            return "\n".join(
                f"{rng.getrandbits(28):07x} {rng.choice(('Fix', 'Add', 'Refactor', 'Bump'))} "
                f"{w.noun()} {w.ident()}"
                for _ in range(rng.randint(2, 8))
            )
        if "status" in words:
            return f"On branch {w.branch}\nChanges not staged for commit:\n\tmodified:   {file}\n"
        if "diff" in words or "show" in words:
            if "--stat" in words or "--name-only" in words:
                return f" {file} | {rng.randint(2, 40)} ++++--\n 1 file changed"
            return (
                f"diff --git a/{file} b/{file}\n--- a/{file}\n+++ b/{file}\n@@ -12,6 +12,9 @@\n"
                f"-    return {w.ident()}(x)\n+    return {w.ident()}(x, strict=True)"
            )
        if "blame" in words:
            return f"{rng.getrandbits(28):07x} ({w.cwd.split('/')[2]} 2025-11-02) {w.ident()}()"
        if "--show-current" in words:
            return w.branch
        return ""

    # -- rule 2: web searches about the repository's own state -------------------------------------

    def web_repo(self, w: World) -> Call:
        rng = self.rng

        def make() -> str:
            own = rng.choice(("this repo", "my repo", "our repo", "this repository",
                              "my repository", "our codebase", "this codebase", "my project",
                              "our project", "this project"))  # fmt: skip
            ident, file, noun, cls = w.ident(), w.file(), w.noun(), w.cls()
            query = rng.choice(
                (
                    f"what changed in the latest commit of {own}",
                    f"current branch of {own}",
                    f"is there a TODO in {own} about {noun}",
                    f"where is {ident} defined in {own}",
                    f"which files in {own} call {ident}",
                    f"does {own} already have a {cls} class",
                    f"who last modified {file} in {own}",
                    f"uncommitted changes in my working tree {w.project}",
                    f"what version of {w.lib()} does {own} pin",
                    f"failing tests in {own} {w.project} {noun}",
                    f"{w.project}: is {ident} still used in my code",
                    f"how many times is {ident} called in {own}",
                    f"latest commits touching {file} in {own}",
                    f"does {own} have tests for {ident}",
                    f"what does {ident} return in {own}",
                    f"{w.project} current branch name and last commit",
                    f"is {cls} imported anywhere in {own}",
                    f"{ident} {noun} usages in {own} {w.lang.name}",
                )
            )
            return query[0].upper() + query[1:] if rng.random() < 0.3 else query

        return self._web(w, self.unique(make), own=True)

    def web_outside(self, w: World) -> Call:
        rng = self.rng

        def make() -> str:
            lib, noun, ident = w.lib(), w.noun(), w.ident()
            error = rng.choice(w.lang.errors).format(ident=ident, noun=noun, Noun=noun.capitalize())
            year = rng.choice(("2024", "2025", "2026"))
            return rng.choice(
                (
                    f"{lib} {noun} {rng.choice(('docs', 'documentation', 'api reference'))}",
                    f'"{error}"',
                    f"{error} {lib}",
                    f"how to {rng.choice(VERBS)} a {noun} with {lib}",
                    f"{lib} {rng.randint(1, 6)}.{rng.randint(0, 12)} release notes, breaking",
                    f"{lib} {rng.choice(VERBS)} {noun} example {year}",
                    f"{w.lang.name} {rng.choice(VERBS)} {noun} best practice",
                    f"{lib} vs {rng.choice(w.lang.libs)} for {noun} {rng.choice(VERBS)}ing",
                    f"{lib} changelog {rng.choice(VERBS)} deprecated {year}",
                    f"{w.lang.name} {lib} {noun} {rng.choice(('timeout', 'retry', 'pagination'))}",
                )
            )

        return self._web(w, self.unique(make), own=False)

    def _web(self, w: World, query: str, own: bool) -> Call:
        rng = self.rng
        sites = (
            ("github.com", "Issue"), ("stackoverflow.com", "Question"), ("docs.rs", "Docs"),
            ("readthedocs.io", "Docs"), ("dev.to", "Post"), ("medium.com", "Post"),
        )  # fmt: skip
        links = [
            {
                "title": f"{kind}: {' '.join(query.split()[:6])}",
                "url": f"https://{site}/{w.noun()}-{rng.randint(100, 99999)}",
            }
            for site, kind in rng.sample(sites, rng.randint(2, 4))
        ]
        if own:
            summary = "I found no public information about this specific private repository."
        else:
            summary = f"The results describe {query.split()[0]} and common causes with fixes."
        out = f'Web search results for query: "{query}"\n\nLinks: {json.dumps(links)}\n\n{summary}'
        if rng.random() < 0.04:
            return Call("WebSearch", {"query": query}, "Error: Web search failed", True)
        return Call("WebSearch", {"query": query}, out)

    # -- rule 3: everything else ------------------------------------------------------------------

    def grep_tool(self, w: World) -> Call:
        rng = self.rng
        pattern, _ = self._pattern(w)
        arguments: dict[str, Any] = {"pattern": pattern}
        if rng.random() < 0.7:
            arguments["path"] = rng.choice((w.dir(), w.path(w.dir()), "src", w.test_dir()))
        if rng.random() < 0.4:
            arguments["glob"] = rng.choice((f"*.{w.lang.ext}", f"**/*.{w.lang.ext}"))
        elif rng.random() < 0.3:
            arguments["type"] = w.lang.rg_type
        mode = rng.choice(("content", "files_with_matches", "count", None))
        if mode:
            arguments["output_mode"] = mode
        if mode == "content":
            arguments["-n"] = True
            if rng.random() < 0.3:
                arguments["-C"] = rng.randint(1, 4)
        if rng.random() < 0.25:
            arguments["-i"] = True
        if rng.random() < 0.2:
            arguments["head_limit"] = rng.choice((20, 30, 50))
        if rng.random() < 0.12:
            return Call("Grep", arguments, "No matches found")
        if mode == "content":
            out = "\n".join(self._matches(w, rng.randint(1, 8)))
        elif mode == "count":
            out = "\n".join(f"{w.file()}:{rng.randint(1, 9)}" for _ in range(rng.randint(1, 4)))
        else:
            found = sorted({w.path(w.file()) for _ in range(rng.randint(1, 5))})
            out = f"Found {len(found)} files\n" + "\n".join(found)
        return Call("Grep", arguments, out)

    def read(self, w: World) -> Call:
        rng = self.rng
        file = rng.choice((*w.files, *w.tests, "README.md", "pyproject.toml", "package.json"))
        arguments: dict[str, Any] = {"file_path": w.path(file)}
        start = 1
        if rng.random() < 0.25:
            start = rng.randint(20, 300)
            arguments["offset"] = start
            arguments["limit"] = rng.choice((40, 60, 80, 120))
        if rng.random() < 0.06:
            return Call(
                "Read", arguments, "<tool_use_error>File does not exist.</tool_use_error>", True
            )
        lines = []
        for number in range(start, start + rng.randint(4, 14)):
            ident = w.ident()
            code = rng.choice(
                (f"{w.lang.define.format(ident=ident)}({w.noun()}):", f"    return {ident}()",
                 f"    {w.noun()} = {w.cls()}()", "", f"    # {ident} handles {w.noun()}s",
                 f"    if not {w.noun()}:", "        raise ValueError")
            )  # fmt: skip
            lines.append(f"{number:>6}\u2192{code}")
        return Call("Read", arguments, "\n".join(lines))

    def glob(self, w: World) -> Call:
        rng = self.rng
        ext = w.lang.ext
        patterns = (
            f"**/*{w.noun()}*", f"**/*.{ext}", f"{w.dir()}/*.{ext}", f"**/*{w.noun()}*.{ext}",
            f"{w.test_dir()}/**/*", "**/*.md", f"**/{w.cls()}*",
        )  # fmt: skip
        arguments: dict[str, Any] = {"pattern": rng.choice(patterns)}
        if rng.random() < 0.3:
            arguments["path"] = w.path(rng.choice(("src", w.dir(), w.test_dir())))
        if rng.random() < 0.12:
            return Call("Glob", arguments, "No files found")
        found = sorted({w.path(w.file()) for _ in range(rng.randint(1, 6))})
        return Call("Glob", arguments, "\n".join(found))

    def edit(self, w: World) -> Call:
        rng = self.rng
        file, ident = w.file(), w.ident()
        old = f"    return {ident}({w.noun()})"
        new = rng.choice(
            (f"    return {ident}({w.noun()}, timeout=timeout)", f"    return {w.ident()}()",
             f"    result = {ident}({w.noun()})\n    log.debug('%s', result)\n    return result")
        )  # fmt: skip
        arguments: dict[str, Any] = {"file_path": w.path(file), "old_string": old}
        arguments["new_string"] = new
        if rng.random() < 0.1:
            arguments["replace_all"] = True
        if rng.random() < 0.08:
            message = rng.choice(
                ("String to replace not found in file.\nString: " + old,
                 "File has not been read yet. Read it first before writing to it.")
            )  # fmt: skip
            return Call("Edit", arguments, f"<tool_use_error>{message}</tool_use_error>", True)
        start = rng.randint(5, 200)
        out = (
            f"The file {w.path(file)} has been updated. Here's the result of running `cat -n` on "
            f"a snippet of the edited file:\n{start:>6}\u2192{new.splitlines()[0]}"
        )
        return Call("Edit", arguments, out)

    def write(self, w: World) -> Call:
        test = w.test().replace(".", f"_{w.noun()}.", 1)
        body = f"{w.lang.define.format(ident='test_' + w.ident())}():\n    assert True\n"
        arguments = {"file_path": w.path(test), "content": body}
        return Call("Write", arguments, f"File created successfully at: {w.path(test)}")

    def todo(self, w: World) -> Call:
        rng = self.rng
        todos = [
            {
                "content": f"{rng.choice(VERBS).capitalize()} {w.noun()} in {w.file()}",
                "status": status,
                "activeForm": f"Working on {w.ident()}",
            }
            for status in rng.sample(["completed", "in_progress", "pending", "pending"], 3)
        ]
        out = (
            "Todos have been modified successfully. Ensure that you continue to use the todo "
            "list to track your progress. Please proceed with the current tasks if applicable"
        )
        return Call("TodoWrite", {"todos": todos}, out)

    def bash_other(self, w: World) -> Call:
        rng, lang = self.rng, w.lang

        def make() -> str:
            file, test, ident = w.file(), w.test(), w.ident()
            stem = file.rsplit("/", 1)[1].rsplit(".", 1)[0]
            values = {
                "test": test, "ident": ident, "dir": w.dir(), "file": file, "stem": stem,
                "Stem": stem[0].upper() + stem[1:], "pkg": w.pkg, "lib": w.lib().split()[0],
                "n": rng.randint(2, 30),
            }  # fmt: skip
            kind = rng.random()
            if kind < 0.38:
                return rng.choice(lang.test_cmds).format(**values)
            if kind < 0.55:
                return rng.choice(lang.build_cmds).format(**values)
            if kind < 0.88:
                n = rng.randint(2, 25)
                return rng.choice(
                    (f"git log --oneline -n {n} -- {file}", f"git diff {file}", "git status",
                     "git status --short", f"git diff --stat HEAD~{n}", f"git show HEAD~{n} --stat",
                     f"git log -p -1 -- {test}", f"git blame -L {n},{n + 12} {file}",
                     f"git checkout -b fix/{ident.lower()}", "git branch --show-current",
                     f"git add {file} {test} && git commit -m \"{rng.choice(VERBS).capitalize()} "
                     f"{w.noun()} {ident}\"", f"git stash list | head -{n}",
                     f"git log --since='{n} days ago' --oneline", f"ls -la {w.dir()}",
                     f"mkdir -p {w.test_dir()}/fixtures/{w.noun()}", f"wc -l {file} {test}",
                     f"git diff --name-only main...{w.branch}", "git fetch origin && git rebase "
                     "origin/main", f"git log --author={rng.choice(PEOPLE)} -n {n} --oneline")
                )  # fmt: skip
            if kind < 0.94:  # a grep filtering a run's output: no content search
                return rng.choice(lang.filters).format(**values)
            return rng.choice(
                (f"git log --oneline -n {rng.randint(20, 90)} | grep -i {w.noun()}",
                 f"git diff --name-only HEAD~{rng.randint(2, 9)} | grep {stem}",
                 f"docker compose ps | grep {w.noun()}", f"make {rng.choice(('build', 'lint'))} "
                 f"2>&1 | grep -i {rng.choice(('error', 'warn'))} | head -{rng.randint(5, 40)}")
            )  # fmt: skip

        command = self.unique(make)
        first = command.split()[0]
        options: tuple[str, ...]
        if first == "git":
            options = ("Show recent changes", "Show the diff", "Check git state", "Git history")
        elif any(word in command for word in ("test", "rspec", "jest", "nextest")):
            options = ("Run the tests", "Run tests and show failures", "Run the failing test")
        else:
            options = ("Check the build", "Run the checks", "Run the linter", "Inspect the tree")
        return self._bash_result(w, command, rng.choice(options), search=False)

    def task(self, w: World, flagged: bool) -> Call:
        rng = self.rng
        prompt = rng.choice(
            (f"Find every place that calls {w.ident()} and summarise how {w.noun()}s flow.",
             f"Explore how {w.cls()} is wired up in {w.dir()} and report back.",
             f"Survey the tests for {w.noun()} handling and list the gaps.")
        )  # fmt: skip
        steps = [
            self.step(w, flagged, read_only=True, phase=i / 3) for i in range(rng.randint(2, 4))
        ]
        arguments = {
            "description": f"Explore {w.noun()} code",
            "prompt": prompt,
            "subagent_type": rng.choice(("Explore", "general-purpose")),
        }
        summary = f"{w.cls()} is built in {w.file()} and used by {w.ident()} in {w.dir()}."
        return Call("Task", arguments, summary, subagent=steps)

    # -- steps and turns -------------------------------------------------------------------------

    def call(self, w: World, kind: str, flagged: bool) -> Call:
        if kind == "bash_search":
            return self.bash_search(w)
        if kind == "web_repo":
            return self.web_repo(w)
        if kind == "task":
            return self.task(w, flagged)
        made: Call = getattr(self, kind)(w)
        return made

    def step(self, w: World, flagged: bool, read_only: bool, phase: float) -> Step:
        rng = self.rng
        explore = phase < 0.5
        wrong = flagged and rng.random() < (WRONG_EARLY if explore else WRONG_LATE)
        if wrong:
            kind = rng.choices(("bash_search", "web_repo"), (64, 36))[0]
        elif read_only:
            kind = rng.choices(("grep_tool", "read", "glob", "bash_other", "web_outside"),
                               (30, 30, 15, 15, 10))[0]  # fmt: skip
        elif explore:
            kind = rng.choices(
                ("grep_tool", "read", "glob", "bash_other", "web_outside", "todo", "task"),
                (28, 26, 12, 16, 9, 4, 5),
            )[0]
        else:
            kind = rng.choices(
                ("read", "edit", "bash_other", "grep_tool", "write", "web_outside"),
                (20, 32, 28, 10, 4, 6),
            )[0]
        calls = [self.call(w, kind, flagged)]
        if kind != "task" and rng.random() < 0.16:  # parallel calls in one response
            second = rng.choice(("read", "read", "glob", "grep_tool", "bash_other"))
            calls.append(self.call(w, second, flagged))
            rng.shuffle(calls)
        preface = ""
        if rng.random() < 0.5:
            preface = rng.choice(PREFACES[_intent(kind)]).format(
                ident=w.ident(), cls=w.cls(), noun=w.noun(), file=w.file()
            )
        thinking = ""
        if rng.random() < 0.15:
            thinking = (
                f"I need to understand how {w.ident()} treats {w.noun()}s before changing it."
            )
        return Step(calls, preface, thinking)


TEST_OUTPUTS = {
    "Python": (
        "==== {p} passed in {t}s ====",
        "FAILED {test}::test_{ident} - AssertionError: assert None == '{noun}'\n"
        "==== {f} failed, {p} passed in {t}s ====",
    ),
    "TypeScript": (
        " Test Files  1 passed (1)\n      Tests  {p} passed ({p})\n   Duration  {t}s",
        " FAIL  {test} > {ident} > handles {noun}s\n"
        "AssertionError: expected undefined to equal '{noun}'\n"
        " Test Files  1 failed (1)\n      Tests  {f} failed | {p} passed",
    ),
    "Go": (
        "ok  \tgithub.com/{org}/{project}/{dir}\t{t}s",
        "--- FAIL: Test{ident} ({t}s)\n    {stem}_test.go:42: got nil, want {noun}\n"
        "FAIL\tgithub.com/{org}/{project}/{dir}\t{t}s",
    ),
    "Rust": (
        "test result: ok. {p} passed; 0 failed; 0 ignored; finished in {t}s",
        "test tests::{ident} ... FAILED\ntest result: FAILED. {p} passed; {f} failed; 0 ignored",
    ),
    "Java": (
        "BUILD SUCCESSFUL in {t}s\n{p} tests completed",
        "{Stem}Test > {ident}() FAILED\n    org.opentest4j.AssertionFailedError at "
        "{Stem}Test.java:57\n{p} tests completed, {f} failed\nBUILD FAILED in {t}s",
    ),
    "Ruby": (
        "Finished in {t} seconds\n{p} examples, 0 failures",
        "Failures:\n  1) {Noun} #{ident} handles nil\n     Failure/Error: expect(result).to "
        "eq({noun})\n{p} examples, {f} failures",
    ),
}
"""A test run's output per language: passed, and failed (after ``Exit code 1``)."""

PREFACES = {
    "search": (
        "Let me find where `{ident}` is defined.", "I'll look for usages of `{cls}`.",
        "Let me search for `{noun}` handling.", "First, let me locate the relevant code.",
    ),
    "read": ("Let me read `{file}`.", "I'll look at the file.", "Let me check the current code."),
    "edit": ("Now I'll make the change.", "Let me update `{ident}`.", "Applying the fix."),
    "run": ("Let me run the tests.", "Let me check the state of things.", "Running the checks."),
    "web": ("Let me look this up.", "I'll search for this.", "Let me check online."),
    "plan": ("Let me plan this out.", "I'll track the steps.", "Let me delegate the survey."),
}  # fmt: skip


def _intent(kind: str) -> str:
    return {
        "bash_search": "search", "grep_tool": "search", "glob": "search", "read": "read",
        "edit": "edit", "write": "edit", "bash_other": "run", "web_repo": "web",
        "web_outside": "web", "todo": "plan", "task": "plan",
    }[kind]  # fmt: skip


ASKS = (
    "Fix the failing test in {test}",
    "where is {ident} defined? I want to change its signature",
    "Rename {ident} to {other} everywhere",
    "add a --{noun}-limit option to the CLI",
    'why does {ident} fail with "{error}"?',
    "The build is broken after merging {branch}, can you take a look",
    "Find all usages of {cls} and make them go through {ident}",
    "add logging to {ident} in {file}",
    "explain how {file} handles {noun}s",
    "Remove the deprecated {ident} helper",
    "write a test for {ident}",
    "clean up the TODOs in {dir}",
    "migrate {cls} off {lib}",
    "add type annotations to {file}",
    "{ident} is slow on big {noun} lists, can you speed it up?",
    "bump {lib} and fix whatever breaks",
    "Can you check whether {cls} still needs the {noun} cache",
    "there's a race in {ident} when two {noun}s arrive at once; fix it",
    "review my last change to {file}",
)
FOLLOW_UPS = (
    "now update the tests too",
    "ok, also handle the empty {noun} case",
    "run the full suite and commit if green",
    "can you also do the same for {other}?",
    "that broke {test}, please fix",
    "looks good. Does {cls} need the same change?",
    "please also update the docs for {ident}",
    "great — now clean up {file}",
)
CLOSINGS = (
    "Done. {ident} now handles the {noun} case and the tests pass.",
    "I've made the change in {file}; the suite is green.",
    "Here's what I found: {cls} is created in {file} and only {ident} uses it.",
    "Fixed. The problem was in {ident}, which ignored empty {noun}s.",
)


def _ask(gen: Generator, w: World, first: bool) -> str:
    rng = gen.rng
    values = {
        "test": w.test(), "ident": w.ident(), "other": w.ident() + "_v2", "noun": w.noun(),
        "cls": w.cls(), "file": w.file(), "dir": w.dir(), "branch": w.branch, "lib": w.lib(),
        "error": rng.choice(w.lang.errors).format(ident=w.ident(), noun=w.noun(),
                                                  Noun=w.noun().capitalize()),
    }  # fmt: skip
    return rng.choice(ASKS if first else FOLLOW_UPS).format(**values)


# -- records -------------------------------------------------------------------------------------


@dataclass
class Label:
    turn_index: int
    step_index: int
    parent_call_id: str | None
    value: str
    reason: str


@dataclass
class Writer:
    """Writes one session's records, keeping the clock, the chain of uuids and the labels."""

    gen: Generator
    w: World
    session_id: str
    version: str
    model: str
    clock: datetime
    records: list[dict[str, Any]] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    subagent_files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    parent: str | None = None

    def stamp(self, record: dict[str, Any], sink: list[dict[str, Any]]) -> dict[str, Any]:
        self.clock += timedelta(milliseconds=self.gen.rng.randint(300, 9000))
        record["timestamp"] = self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        sink.append(record)
        return record

    def common(self, **extra: Any) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "version": self.version,
            "cwd": self.w.cwd,
            "gitBranch": self.w.branch,
            **extra,
        }

    def response(
        self, turn: int, step: Step, sink: list[dict[str, Any]], parent: str | None, **extra: Any
    ) -> tuple[str | None, list[tuple[str, Call]]]:
        """The records of one assistant response (one block a line) and its results (a
        subagent's file written before its call's result); the last uuid of the chain and the
        calls with their ids."""
        gen = self.gen
        message_id = "msg_01" + gen.token(22)
        request = "req_011C" + gen.token(20)
        blocks: list[dict[str, Any]] = []
        if step.thinking:
            blocks.append(
                {"type": "thinking", "thinking": step.thinking, "signature": gen.token(40)}
            )
        if step.preface:
            blocks.append(text(step.preface))
        calls = [("toolu_01" + gen.token(22), call) for call in step.calls]
        blocks += [tool_use(call_id, call.name, **call.arguments) for call_id, call in calls]
        usage = {
            "input_tokens": gen.rng.randint(1, 9),
            "cache_creation_input_tokens": gen.rng.randint(0, 4000),
            "cache_read_input_tokens": gen.rng.randint(8000, 90000),
            "output_tokens": gen.rng.randint(20, 900),
            "service_tier": "standard",
        }
        for block in blocks:
            uuid_ = gen.uuid()
            record = assistant(uuid_, message_id, block, parent, **self.common(**extra))
            record["message"]["model"] = self.model
            record["message"]["stop_reason"] = None
            record["message"]["usage"] = usage
            record["requestId"] = request
            self.stamp(record, sink)
            parent = uuid_
        assistant_uuid = parent
        for call_id, call in calls:
            uuid_ = gen.uuid()
            extra_fields = dict(call.extra)
            if call.subagent is not None:
                agent_id = f"{gen.rng.getrandbits(32):08x}"
                extra_fields["toolUseResult"] = {"status": "completed", "agentId": agent_id}
                self.write_subagent(turn, call_id, agent_id, call)
            content: Any = call.output if call.name != "Task" else [text(call.output)]
            record = result(
                uuid_,
                call_id,
                content,
                call.is_error,
                parentUuid=parent,
                sourceToolAssistantUUID=assistant_uuid,
                **self.common(**extra),
                **extra_fields,
            )
            self.stamp(record, sink)
            parent = uuid_
        return parent, calls

    def final(self, sink: list[dict[str, Any]], parent: str | None, **extra: Any) -> str:
        w = self.w
        uuid_ = self.gen.uuid()
        closing = self.gen.rng.choice(CLOSINGS).format(
            ident=w.ident(), noun=w.noun(), file=w.file(), cls=w.cls()
        )
        message_id = "msg_01" + self.gen.token(22)
        record = assistant(uuid_, message_id, text(closing), parent, **self.common(**extra))
        record["message"]["model"] = self.model
        record["message"]["stop_reason"] = "end_turn"
        self.stamp(record, sink)
        return uuid_

    def label(
        self, turn: int, index: int, parent_call: str | None, calls: list[tuple[str, Call]]
    ) -> None:
        wrong = [
            call
            for _, call in calls
            if rule_label(call.name, call_text(call.name, call.arguments)) == "incorrect"
        ]
        value = "incorrect" if wrong else "correct"
        reason = reason_for(wrong[0].name, wrong[0].arguments) if wrong else CORRECT_REASON
        self.labels.append(Label(turn, index, parent_call, value, reason))

    def write_subagent(self, turn: int, call_id: str, agent_id: str, call: Call) -> None:
        """The subagent's own file; its steps are labelled under the spawning call."""
        sink: list[dict[str, Any]] = []
        side = {"isSidechain": True, "agentId": agent_id}
        first = self.gen.uuid()
        record = user(first, call.arguments["prompt"], None, **self.common(**side))
        self.stamp(record, sink)
        parent: str | None = first
        for index, step in enumerate(call.subagent or []):
            parent, calls = self.response(turn, step, sink, parent, **side)
            self.label(turn, index, call_id, calls)
        self.final(sink, parent, **side)
        self.subagent_files[agent_id] = sink

    def turn(self, index: int, ask: str, steps: list[Step]) -> None:
        gen = self.gen
        ask_uuid = gen.uuid()
        snapshot: dict[str, Any] = {
            "type": "file-history-snapshot",
            "messageId": ask_uuid,
            "snapshot": {"messageId": ask_uuid, "trackedFileBackups": {}, "timestamp": None},
            "isSnapshotUpdate": False,
        }
        self.stamp(snapshot, self.records)
        snapshot["snapshot"]["timestamp"] = snapshot["timestamp"]
        record = user(ask_uuid, ask, self.parent, **self.common(permissionMode="default"))
        self.stamp(record, self.records)
        parent: str | None = ask_uuid
        for position, step in enumerate(steps):
            parent, calls = self.response(index, step, self.records, parent)
            self.label(index, position, None, calls)
        self.parent = self.final(self.records, parent)
        duration = {
            "type": "system",
            "subtype": "turn_duration",
            "durationMs": gen.rng.randint(4000, 240000),
            "uuid": gen.uuid(),
            "parentUuid": self.parent,
            "isSidechain": False,
            "isMeta": False,
            **self.common(),
        }
        if gen.rng.random() < 0.5:
            self.stamp(duration, self.records)
            self.parent = duration["uuid"]


def _session(gen: Generator, flagged: bool, start: datetime) -> Writer:
    rng = gen.rng
    w = make_world(rng)
    writer = Writer(gen, w, gen.uuid(), rng.choice(VERSIONS), rng.choice(MODELS), start)
    turns = rng.choices((1, 2, 3), (15, 35, 50))[0]
    for index in range(turns):
        count = rng.choices(range(2, 9), (1, 2, 3, 3, 3, 3, 3))[0]
        steps = [
            gen.step(w, flagged, read_only=False, phase=i / max(count - 1, 1)) for i in range(count)
        ]
        if flagged and index == 0 and not any(_step_value(s) == "incorrect" for s in steps):
            steps[0] = Step([gen.call(w, rng.choice(("bash_search", "web_repo")), flagged)])
        writer.turn(index, _ask(gen, w, first=index == 0), steps)
    return writer


def _step_value(step: Step) -> str:
    values = {rule_label(c.name, call_text(c.name, c.arguments)) for c in step.calls}
    return "incorrect" if "incorrect" in values else "correct"


def _term(pattern: str) -> str:
    """The name a search pattern looks for (its longest word)."""
    words: list[str] = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", pattern)
    return max(words, key=len)


def _dump(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records)


def write_labelled_sessions(folder: Path, sessions: int = 48, seed: int = 0) -> Path:
    """Write ``sessions`` Claude Code sessions under ``folder`` (``<project>/<id>.jsonl``,
    a subagent's records in ``<project>/<id>/subagents/agent-<agent>.jsonl``) and a JSONL file
    labelling every step of them by the module's rules; return that file's path
    (``folder/.labels/steps.jsonl``). The same seed writes the same bytes."""
    gen = Generator(seed)
    rows = []
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    clean = set(gen.rng.sample(range(sessions), round(sessions * CLEAN_SHARE)))
    for number in range(sessions):
        flagged = number not in clean
        begin = start + timedelta(hours=7 * number, minutes=gen.rng.randint(0, 300))
        writer = _session(gen, flagged, begin)
        project = folder / writer.w.cwd.replace("/", "-")
        project.mkdir(parents=True, exist_ok=True)
        (project / f"{writer.session_id}.jsonl").write_text(_dump(writer.records), "utf-8")
        for agent_id, records in writer.subagent_files.items():
            side = project / writer.session_id / "subagents"
            side.mkdir(parents=True, exist_ok=True)
            (side / f"agent-{agent_id}.jsonl").write_text(_dump(records), "utf-8")
        rows += [
            {
                "session_id": writer.session_id,
                "turn_index": label.turn_index,
                "step_index": label.step_index,
                "parent_call_id": label.parent_call_id,
                "value": label.value,
                "reason": label.reason,
                "labeller": LABELLER,
            }
            for label in writer.labels
        ]
    path = folder / LABELS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_dump(rows), "utf-8")
    return path
