"""The served workbench under several visitors at once, on a collection of real-shaped sessions.

Builds ``--sessions`` Claude Code sessions from the real ones (as ``bench_collection.py`` does)
under a data root, builds the index the app opens, and serves the app as a team would: served
(``TSQ_SERVED=1``) behind an authenticating proxy (``TSQ_AUTH=proxy``; each visitor's browser
sends its own identity header). Then, for each count in ``--visitors`` (4, then 8), that many
visitors, each in a context of its own of one Chromium (Playwright, a process per visitor),
repeat for ``--seconds`` seconds: the Overview, a search on it, a Session, a Turn, the Trends
page, and a label saved on a step of the Turn page. A visitor loads the Overview once and
clicks on as a person does (a search result's row, a turn's row, the navigation's links);
``--reload`` loads every page from its address instead, a whole page load each.

Prints, per page, the time to a finished render (its title drawn, no skeleton left, its script
run to the end; median and 95th percentile over every visit; a visitor's first page, its
browser loading the app, on a line of its own), the server's peak memory (its
process tree), errors (tracebacks and "database is locked" in the server's log, failed visits),
labels saved against labels in the store afterwards (none may be lost), and the share of the
machine's CPU the visitors used themselves (the browser with its renderers, and each visitor's
Playwright): on a small machine they compete with the server, so the figures are an upper
bound of what visitors elsewhere would see.

    python benchmarks/bench_serving.py [--sessions 10000] [--keep DIR] [--visitors 4 8]
        [--seconds 180] [--think SECONDS] [--reload] [--arrive SECONDS] [--screenshots DIR]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "tests"))

from bench_collection import build_collection  # noqa: E402
from streamlit_server import streamlit_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
IDENTITY_HEADER = "X-Forwarded-Email"
PAGES = ("first load", "overview", "search", "session", "turn", "trends", "label")
"""What is timed: a visitor's first page (its browser loading the app: the Overview), then, round
after round, the Overview, a search, a Session, a Turn, Trends and a label saved."""
GOALS = {"p95 seconds with 4 visitors": 5.0, "server peak GB": 2.0}
IDLE = (
    "document.querySelector('[data-testid=\"stMain\"] h1')"
    " && !document.querySelector('[data-testid=\"stSkeleton\"]')"
    " && document.querySelector('[data-testid=\"stApp\"]')"
    ".getAttribute('data-test-script-state') === 'notRunning'"
)
"""A page has finished rendering: its title is drawn, no skeleton is left, and its script has
run to its end (Streamlit's own script state on the app's root: ``initial`` before the first
run, ``running`` meanwhile; its running indicator shows only after a delay, so its absence
proves nothing)."""


def session_ids(folder: Path, count: int) -> list[str]:
    """The ids of ``count`` main sessions of the collection (read from their first records)."""
    found: list[str] = []
    for path in sorted(folder.glob("*/*.jsonl")):
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                session = json.loads(line).get("sessionId")
                if session:
                    found.append(session)
                    break
        if len(found) == count:
            break
    return found


@dataclass(frozen=True)
class Going:
    """How the visitors go: for ``seconds``, reading each page ``think`` seconds, loading every
    page from its address (``reload``) or clicking on, and arriving ``arrive`` seconds apart
    (all at once by default)."""

    seconds: float
    think: float = 0.0
    reload: bool = False
    arrive: float = 0.0


class Visitor:
    """One visitor's pages in a browser context of their own, each timed to its finished
    render: by clicking through the workbench as a person does, or by loading each page from
    its address."""

    def __init__(
        self, page: Any, number: int, url: str, source: str, sessions: list[str], think: float
    ) -> None:
        self.page, self.number, self.url, self.source = page, number, url, source
        self.sessions, self.think = sessions, think
        self.timings: list[tuple[str, float | None]] = []
        self.screenshots: Path | None = None

    def timed(self, name: str, action: Any) -> None:
        started = time.monotonic()
        try:
            action()
            self.page.wait_for_function(IDLE, timeout=60_000)
            if "Traceback" in self.page.inner_text("body"):
                raise RuntimeError("a traceback on the page")
            self.timings.append((name, time.monotonic() - started))
        except Exception:  # a failed visit is counted, not fatal
            self.timings.append((name, None))
        if self.screenshots and len(self.timings) < len(PAGES):
            self.page.screenshot(path=str(self.screenshots / f"{len(self.timings)}-{name}.png"))
        time.sleep(self.think)

    def opened(self, title: str, act: Any) -> Any:
        """``act``, then until the page titled ``title`` has replaced the one shown."""

        def open_it() -> None:
            act()
            self.page.wait_for_function(
                "document.querySelector('[data-testid=\"stMain\"] h1')?.innerText"
                f" === {json.dumps(title)}",
                timeout=60_000,
            )

        return open_it

    def link(self, title: str) -> None:
        navigation = self.page.locator(".st-key-workbench_navigation")
        navigation.get_by_text(title, exact=True).click()

    def row(self, number: int) -> None:
        table = self.page.get_by_test_id("stDataFrame").first
        table.scroll_into_view_if_needed()
        box = table.bounding_box()
        assert box is not None
        self.page.mouse.click(box["x"] + 15, box["y"] + 35 * (number + 1) + 17)  # its checkbox

    def search(self, words: str) -> None:
        box = self.page.get_by_label("Find sessions")
        box.fill(words)
        box.press("Enter")
        self.page.wait_for_timeout(250)  # the rerun starts (counted in the page's time)

    def label(self, open_turn: Any, reason: str) -> None:
        open_turn()
        self.page.wait_for_function(IDLE, timeout=60_000)
        self.page.get_by_text("correct", exact=True).first.click()
        self.page.get_by_label("Reason").fill(reason)
        self.page.get_by_role("button", name="Save label").click()
        self.page.get_by_text("Saved:").first.wait_for(timeout=60_000)

    def clicking(self, round_: int) -> None:
        """A round as a person goes: the Overview loaded once, then the navigation's links, a
        search result's row and a turn's row."""
        if round_ == 0:
            home = partial(self.page.goto, f"{self.url}/?{self.source}")
        else:
            home = partial(self.link, "Overview")
        self.timed("first load" if round_ == 0 else "overview", self.opened("Sessions", home))
        self.timed("search", partial(self.search, self._words(round_)))
        self.timed("session", self.opened("Session", partial(self.row, (self.number + round_) % 8)))
        self.timed("turn", self.opened("Turn", partial(self.row, 0)))
        self.timed("trends", self.opened("Trends", partial(self.link, "Trends")))
        turn = self.opened("Turn", partial(self.link, "Turn"))
        self.timed("label", partial(self.label, turn, self._reason(round_)))

    def loading(self, round_: int) -> None:
        """A round of pages each loaded from its address, a whole page load each."""
        session = self.sessions[(self.number * 997 + round_) % len(self.sessions)]
        place = f"{self.source}&session={urllib.parse.quote(session)}"
        step = partial(self.page.goto, f"{self.url}/turn?{place}&turn=0&step=0")
        overview = "first load" if round_ == 0 else "overview"
        self.timed(overview, partial(self.page.goto, f"{self.url}/?{self.source}"))
        self.timed("search", partial(self.search, self._words(round_)))
        self.timed("session", partial(self.page.goto, f"{self.url}/session?{place}"))
        self.timed("turn", step)
        self.timed("trends", partial(self.page.goto, f"{self.url}/trends?{self.source}"))
        self.timed("label", partial(self.label, step, self._reason(round_)))

    def _words(self, round_: int) -> str:
        """A search with results: the start of a session's id, which its copies share."""
        return self.sessions[(self.number * 7 + round_) % len(self.sessions)][:8]

    def _reason(self, round_: int) -> str:
        return f"bench visitor {self.number} round {round_}"


def visitor(
    number: int,
    url: str,
    browser_address: str,
    folder: str,
    sessions: list[str],
    going: Going,
    out: Any,
    screenshots: str | None = None,
) -> None:
    """One visitor's loop in a process of its own, in a context of its own of the one Chromium
    at ``browser_address`` (its DevTools address); puts its (page, seconds or None) pairs, the
    labels it saved and the CPU seconds it used (its Playwright driver included) on ``out``.
    It arrives after the visitors numbered before it, loads the Overview once and clicks its way
    on as a person does, or loads every page from its address (:class:`Going`)."""
    from playwright.sync_api import sync_playwright

    saved = 0
    deadline = time.monotonic() + going.seconds
    time.sleep(number * going.arrive)
    with sync_playwright() as playwright:
        browser = playwright.chromium.connect_over_cdp(browser_address)
        context = browser.new_context(
            viewport={"width": 1400, "height": 900},
            extra_http_headers={IDENTITY_HEADER: f"visitor{number}@example.com"},
        )
        source = f"source=folder&folder={urllib.parse.quote(folder)}"
        visit = Visitor(context.new_page(), number, url, source, sessions, going.think)
        if screenshots and number == 0:
            visit.screenshots = Path(screenshots)
        round_ = 0
        while time.monotonic() < deadline:
            if going.reload:
                visit.loading(round_)
            else:
                visit.clicking(round_)
            saved += visit.timings[-1][1] is not None
            round_ += 1
        used = _cpu_seconds(psutil.Process())
        context.close()
        browser.close()  # connected over CDP: disconnects, the browser stays up
    out.put((visit.timings, saved, used))


@contextmanager
def chromium(folder: Path) -> Iterator[tuple[psutil.Process, str]]:
    """One headless Chromium for every visitor (each in a context of its own, as visitors'
    browsers share nothing), and its DevTools address; ended with its processes."""
    process = subprocess.Popen(
        [
            CHROMIUM,
            "--headless=new",
            *CHROMIUM_ARGS,
            "--remote-debugging-port=0",
            f"--user-data-dir={folder / 'chromium'}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith("DevTools listening on "):
                address = line.removeprefix("DevTools listening on ").strip()
                break
        else:
            raise RuntimeError("Chromium ended before it listened for DevTools")
        threading.Thread(target=process.stderr.read, daemon=True).start()  # keep it drained
        yield psutil.Process(process.pid), address
    finally:
        process.terminate()
        process.wait(timeout=30)


def _cpu_seconds(process: psutil.Process) -> float:
    """The CPU seconds of ``process`` and every process under it (Chromium's renderers and GPU
    process included), with the children each has waited for."""
    total = 0.0
    for member in _tree(process):
        try:
            times = member.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def _tree(process: psutil.Process) -> list[psutil.Process]:
    try:
        return [process, *process.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _rss(process: psutil.Process) -> int:
    total = 0
    for member in _tree(process):
        try:
            total += member.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total


def run(
    count: int,
    root: Path,
    folder: Path,
    cache: Path,
    sessions: list[str],
    going: Going,
    screenshots: Path | None = None,
) -> dict[str, Any]:
    """Serve the app, send ``count`` visitors as ``going`` says, and measure."""
    data = Path(tempfile.mkdtemp(prefix="tsq-bench-serving-data-"))
    log = data / "server.log"
    env = {
        "TSQ_SERVED": "1",
        "TSQ_AUTH": "proxy",
        "TSQ_AUTH_HEADER": IDENTITY_HEADER,
        "TSQ_DATA_ROOT": str(root),
        "TSQ_DATA_DIR": str(data),
        "XDG_CACHE_HOME": str(cache),
    }
    with streamlit_server(env=env, log=log) as server, chromium(data) as (browser, address):
        url = server.url
        watched = psutil.Process(server.process.pid)
        peak = 0
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, _rss(watched))
                stop.wait(0.5)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            results: Any = multiprocessing.get_context("spawn").Queue()
            visitors = [
                multiprocessing.get_context("spawn").Process(
                    target=visitor,
                    args=(
                        n,
                        url,
                        address,
                        str(folder),
                        sessions,
                        going,
                        results,
                        screenshots and str(screenshots),
                    ),
                )
                for n in range(count)
            ]
            started = time.monotonic()
            served_before = _cpu_seconds(watched)
            for process in visitors:
                process.start()
            collected = [results.get(timeout=going.seconds + 600) for _ in visitors]
            for process in visitors:
                process.join(timeout=60)
            elapsed = time.monotonic() - started
            browser_cpu = _cpu_seconds(browser)
            server_cpu = _cpu_seconds(watched) - served_before
        finally:
            stop.set()
            sampler.join()
    text = log.read_text(encoding="utf-8", errors="replace")
    saved = sum(labels for _, labels, _ in collected)
    generator_cpu = browser_cpu + sum(cpu for _, _, cpu in collected)
    in_store = _labels_in_store(data)
    visits: dict[str, list[float]] = {name: [] for name in PAGES}
    failed: dict[str, int] = dict.fromkeys(PAGES, 0)
    for timings, _, _ in collected:
        for name, took in timings:
            if took is None:
                failed[name] += 1
            else:
                visits[name].append(took)
    return {
        "visitors": count,
        **asdict(going),
        "visits": visits,
        "failed": failed,
        "peak_gb": peak / 1024**3,
        "tracebacks": text.count("Traceback"),
        "locked": text.count("database is locked"),
        "saved": saved,
        "in_store": in_store,
        "generator_share": generator_cpu / (elapsed * (os.cpu_count() or 1)),
        "server_share": server_cpu / (elapsed * (os.cpu_count() or 1)),
        "server_seconds_per_visit": server_cpu / max(1, sum(map(len, visits.values()))),
    }


def _labels_in_store(data: Path) -> int:
    """The benchmark's labels in every label store under ``data``."""
    import sqlite3

    found = 0
    for store in data.rglob("*.sqlite*"):
        if store.suffix not in {".sqlite", ".sqlite3"}:
            continue
        with sqlite3.connect(store) as connection:
            tables = {row[0] for row in connection.execute("select name from sqlite_master")}
            if "step_labels" in tables:
                found += connection.execute(
                    "select count(*) from step_labels where reason like 'bench visitor %'"
                ).fetchone()[0]
    return found


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def report(figures: dict[str, Any]) -> None:
    reading = f", each reading a page {figures['think']:g} s" if figures["think"] else ""
    loading = ", every page loaded from its address" if figures["reload"] else ""
    arriving = f", arriving {figures['arrive']:g} s apart" if figures["arrive"] else ""
    print(f"\n{figures['visitors']} visitors{reading}{loading}{arriving}")
    print(f"{'page':11} {'visits':>7} {'failed':>7} {'median s':>9} {'p95 s':>7}")
    for name in PAGES:
        took = figures["visits"][name]
        median = f"{statistics.median(took):9.2f}" if took else f"{'—':>9}"
        p95 = f"{percentile(took, 0.95):7.2f}" if took else f"{'—':>7}"
        print(f"{name:11} {len(took):7d} {figures['failed'][name]:7d} {median} {p95}")
    print(
        f"server peak {figures['peak_gb']:.2f} GB (goal ≤ {GOALS['server peak GB']:.1f}); "
        f'tracebacks in its log {figures["tracebacks"]}; "database is locked" '
        f"{figures['locked']}; labels saved {figures['saved']}, in the store "
        f"{figures['in_store']}; the visitors' browsers used "
        f"{figures['generator_share']:.0%} of the machine's CPU, the server "
        f"{figures['server_share']:.0%} ({figures['server_seconds_per_visit']:.2f} CPU seconds "
        "a visit)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep the data root (DIR/root) and its index (DIR/cache) here, for the next run",
    )
    parser.add_argument("--visitors", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="seconds a visitor reads each page before the next (none: one page after another)",
    )
    parser.add_argument(
        "--reload",
        action="store_true",
        help="load every page from its address (as a link from elsewhere would), not by "
        "clicking through the workbench",
    )
    parser.add_argument(
        "--arrive",
        type=float,
        default=0.0,
        help="seconds between one visitor's arrival and the next's (none: all at once)",
    )
    parser.add_argument(
        "--screenshots", type=Path, help="keep the first visitor's first round of pages here"
    )
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="tsq-bench-serving-"))
    root = work / "root"
    folder = root / "projects"
    cache = work / "cache"
    index = cache / "tsq-workbench" / "index.duckdb"
    index.parent.mkdir(parents=True, exist_ok=True)
    if not folder.is_dir():
        size = build_collection(folder, args.sessions)
        print(f"{args.sessions:,} sessions, {size / 1e9:.2f} GB under {root}")
    subprocess.run(
        [sys.executable, "-m", "analysis", "index", str(folder), "--index", str(index)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    sessions = session_ids(folder, 200)
    for count in args.visitors:
        if args.screenshots:
            args.screenshots.mkdir(parents=True, exist_ok=True)
        report(
            run(
                count,
                root,
                folder,
                cache,
                sessions,
                Going(args.seconds, args.think, args.reload, args.arrive),
                args.screenshots,
            )
        )
    print(f"\ngoal: no error, no lost label, p95 ≤ {GOALS['p95 seconds with 4 visitors']:.0f} s")


if __name__ == "__main__":
    main()
