"""The workbench served for real: a Streamlit server in a subprocess on a free port, polled
until healthy at ``/_stcore/health``, and always ended (its whole process group)."""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
from conftest import SERVING_SETTINGS

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def reserved_port() -> Iterator[int]:
    """A free port, held until the ``with`` ends by a socket bound to it (with SO_REUSEADDR,
    never listening): no other test, in this process or another worker, is given it meanwhile,
    and a server that sets SO_REUSEADDR (Tornado, under Streamlit, does) can still listen on it,
    on 127.0.0.1 or 0.0.0.0."""
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", 0))
        yield int(holder.getsockname()[1])


@dataclass
class Server:
    url: str
    """``http://127.0.0.1:PORT``: how this machine reaches it."""
    port: int
    process: subprocess.Popen[bytes]

    def listening(self) -> set[tuple[str, int]]:
        """The (address, port) pairs its processes listen on, as the operating system says."""
        processes = [psutil.Process(self.process.pid)]
        processes += processes[0].children(recursive=True)
        return {
            (connection.laddr.ip, connection.laddr.port)
            for process in processes
            for connection in process.net_connections(kind="inet")
            if connection.status == psutil.CONN_LISTEN
        }


def streamlit_command(*options: str) -> list[str]:
    """``streamlit run app.py`` with ``options``, headless, on the current interpreter."""
    return [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"), *options]


@contextmanager
def streamlit_server(
    command: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
    port: int | None = None,
    log: Path | None = None,
) -> Iterator[Server]:
    """Run ``command`` (default: ``streamlit run app.py`` on 127.0.0.1) until the ``with``
    ends. The port and headless mode go in through Streamlit's environment variables, so any
    command that starts the app (``make run``) gets them. No API key and no serving setting unless
    ``env`` gives them. Its output goes to ``log`` (default: nowhere)."""
    with ExitStack() as held:
        port = port or held.enter_context(reserved_port())
        output = held.enter_context(log.open("wb")) if log else subprocess.DEVNULL
        base = {key: value for key, value in os.environ.items() if key not in SERVING_SETTINGS}
        environment = {
            **base,
            "ANTHROPIC_API_KEY": "",
            "STREAMLIT_SERVER_PORT": str(port),
            "STREAMLIT_SERVER_HEADLESS": "true",
            "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
            **(env or {}),
        }
        process = subprocess.Popen(
            list(command or streamlit_command("--server.address", "127.0.0.1")),
            cwd=REPO,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
            start_new_session=True,  # its own process group: make and streamlit end together
        )
        server = Server(url=f"http://127.0.0.1:{port}", port=port, process=process)
        try:
            _wait_healthy(server)
            yield server
        finally:
            _end(process)


def _wait_healthy(server: Server, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the server exited with status {server.process.returncode}")
        try:
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"streamlit did not start within {seconds:.0f} s")


def _end(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def is_loopback_ip(address: str) -> bool:
    return ipaddress.ip_address(address.split("%")[0]).is_loopback


def other_addresses() -> list[str]:
    """This machine's own addresses that are not loopback (another machine's way in)."""
    found = []
    for addresses in psutil.net_if_addrs().values():
        for address in addresses:
            if address.family in (socket.AF_INET, socket.AF_INET6):
                ip = address.address.split("%")[0]
                parsed = ipaddress.ip_address(ip)
                if not parsed.is_loopback and not parsed.is_link_local:
                    found.append(ip)
    return found


def accepts(address: str, port: int) -> bool:
    """Whether a TCP connection to ``address:port`` is accepted."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family) as probe:
        probe.settimeout(2)
        try:
            probe.connect((address, port))
        except OSError:
            return False
    return True
