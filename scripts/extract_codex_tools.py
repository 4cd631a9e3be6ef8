"""Capture OpenAI Codex's built-in tools, version by version, from its published npm packages.

Writes ``analysis/data/codex_tools.json`` (read by ``analysis.catalog``): every examined version
with the tools it offers the model, and for each tool name the definitions it had, each with the
inclusive range of examined versions it held in (``until`` null: still current), its kind
(``function``, ``freeform``, ``web_search``, ``image_generation``), its input JSON Schema and
Codex's own description.

Codex is a native binary whose tool definitions are built at run time, so they are read where
the model reads them: for each version in ``VERSIONS`` the script runs ``npm pack
@openai/codex@VERSION-linux-x64`` (or ``@openai/codex@VERSION`` for versions that ship every
platform in one package) in ``--cache DIR`` (kept) or a temporary folder, then runs the
package's Linux binary once as ``codex exec ok`` with a fresh ``HOME``, an API key and
``OPENAI_BASE_URL`` (``openai_base_url`` from 0.125) pointing at a server on loopback that
answers as the Responses API does, and keeps the ``tools`` of the first request. A second run
configures one MCP server (a stdio server written by this script, offering one tool) to see the
tools Codex adds only then (the MCP resource tools). Nothing leaves the machine but the npm
downloads.

* ``always_enabled`` is true for a tool of the default configuration's request; a tool that
  only the MCP run shows is false, and so are the curated ``CONDITIONAL`` tools that no
  capture can show (a sign-in or an interactive front end decides them), each with its source.
* A description Codex builds from the run (``spawn_agent``'s lists the models) is null.
* MCP tools (``mcp__SERVER__…``, earlier ``SERVER__…``) and namespaces are not built-ins and
  are left out.

``VERSIONS`` brackets each change found in the tool set. To take in a new release, add it
(``--versions A,B --output /tmp/x.json`` examines only those, to locate a change first).

    python scripts/extract_codex_tools.py [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "analysis" / "data" / "codex_tools.json"
PACKAGE = "@openai/codex"
VERSIONS = ["0.40.0", "0.60.1", "0.80.0", "0.100.0", "0.118.0", "0.125.0", "0.128.0-alpha.1"]
BINARIES = ("vendor/x86_64-unknown-linux-musl/codex/codex", "bin/codex-x86_64-unknown-linux-musl")
BUILT_AT_RUN_TIME = frozenset({"spawn_agent"})
"""Tools whose description Codex writes from the run (the models it may spawn)."""
CONDITIONAL: dict[str, dict[str, Any]] = {
    "image_generation": {
        "versions": ["0.125.0", "0.128.0-alpha.1"],
        "definition": {"kind": "image_generation", "input_schema": None, "description": None},
        "note": "codex-rs/tools/src/tool_registry_plan.rs: offered when image_gen_tool is on, "
        "which needs a ChatGPT sign-in (an API-key run cannot show it)",
    },
    "update_plan": {
        "versions": ["0.40.0"],
        "like": "0.60.1",
        "note": "the 0.40.0 TUI passes include_plan_tool: Some(true); `codex exec` does not, "
        "so its definition is the next examined version's",
    },
}
"""Tools a capture cannot show, with where they come from (``note``, kept on the definition);
``like``: the version whose captured definition they had."""
GITHUB_SOURCES = [
    {
        "repo": "openai/codex",
        "path": "codex-rs/tools/src/tool_registry_plan.rs",
        "commit": "107b75aedb8c75dff1bb3fdac399df55a72bf62f",
        "what": "which tools are offered under which configuration (the CONDITIONAL entries)",
    },
    {
        "repo": "openai/codex",
        "path": "codex-rs/tools/src/local_tool.rs",
        "commit": "13bdd524f296e2c7917bef959ad0a8f97bd16ed1",
        "what": "exec_command, write_stdin, shell, shell_command: the text the binaries send",
    },
]
PROBE = "probe"
"""The MCP server of the second run; its tool is ``mcp__probe__echo`` (``probe__echo`` before
Codex named MCP tools ``mcp__SERVER__TOOL``)."""
MCP_PREFIXES = ("mcp__", f"{PROBE}__")
MCP_SERVER = """import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    result = {}
    if message.get("method") == "initialize":
        result = {"protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
                  "capabilities": {"tools": {}, "resources": {}},
                  "serverInfo": {"name": "probe", "version": "0.0.1"}}
    elif message.get("method") == "tools/list":
        result = {"tools": [{"name": "echo", "description": "Echo text",
                             "inputSchema": {"type": "object", "properties": {}}}]}
    elif message.get("method") == "resources/list":
        result = {"resources": []}
    elif message.get("method") == "resources/templates/list":
        result = {"resourceTemplates": []}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


class _Responses(BaseHTTPRequestHandler):
    """The Responses API as far as one ``codex exec`` needs it; keeps every request body."""

    bodies: list[bytes]

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = json.dumps({"models": [], "data": []}).encode()
        self.send_response(200 if "models" in self.path else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.bodies.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        message = {"type": "message", "role": "assistant", "id": "msg_1"}
        message["content"] = [{"type": "output_text", "text": "ok"}]
        for event in (
            {"type": "response.created", "response": {"id": "resp_1"}},
            {"type": "response.output_item.done", "item": message},
            {"type": "response.completed", "response": {"id": "resp_1", "usage": usage}},
        ):
            self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()


@contextmanager
def _loopback() -> Iterator[tuple[str, list[bytes]]]:
    bodies: list[bytes] = []
    handler = type("Handler", (_Responses,), {"bodies": bodies})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", bodies
    finally:
        server.shutdown()


def pack(version: str, cache: Path) -> tuple[Path, dict[str, Any]]:
    """The unpacked package of ``version`` in ``cache`` (packed and unpacked once), and its
    npm source entry (name, version, tarball shasum)."""
    target, record = cache / version, cache / f"{version}.npm.json"
    if not (target.exists() and record.exists()):
        for spec in (f"{PACKAGE}@{version}-linux-x64", f"{PACKAGE}@{version}"):
            done = subprocess.run(
                ["npm", "pack", spec, "--json", "--pack-destination", str(cache)],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode == 0:
                break
        else:
            sys.exit(f"npm pack {PACKAGE}@{version} failed: {done.stderr.strip()}")
        (packed,) = json.loads(done.stdout)
        with tarfile.open(cache / packed["filename"]) as archive:
            archive.extractall(target, filter="data")
        (cache / packed["filename"]).unlink()
        record.write_text(json.dumps(packed))
    packed = json.loads(record.read_text())
    source = {"repo": f"npm:{PACKAGE}", "path": packed["filename"], "commit": packed["shasum"]}
    return target / "package", source | {"version": version, "what": "the binary's requests"}


def binary_of(package: Path) -> Path:
    found = next((package / path for path in BINARIES if (package / path).is_file()), None)
    if found is None:
        sys.exit(f"{package}: no Linux x86-64 codex binary in the package")
    return found


def capture(binary: Path, with_mcp: bool) -> dict[str, Any]:
    """The first request ``codex exec ok`` sends, with or without one MCP server."""
    with tempfile.TemporaryDirectory() as home, _loopback() as (url, bodies):
        config = Path(home) / ".codex"
        config.mkdir()
        if with_mcp:
            server = Path(home) / "probe_mcp.py"
            server.write_text(MCP_SERVER)
            command = json.dumps(sys.executable)
            (config / "config.toml").write_text(
                f'[mcp_servers.{PROBE}]\ncommand = {command}\nargs = ["{server}"]\n'
            )
        env = {"HOME": home, "PATH": os.environ["PATH"], "OPENAI_API_KEY": "sk-probe"}
        subprocess.run(
            [str(binary), "exec", "--skip-git-repo-check", "-c", f'openai_base_url="{url}"', "ok"],
            env=env | {"OPENAI_BASE_URL": url},
            cwd=home,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
        if not bodies:
            sys.exit(f"{binary}: codex sent no request to the loopback server")
        request: dict[str, Any] = json.loads(bodies[0])
        return request


def definition_of(tool: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A request's tool as the data file keeps it; None for an MCP tool or a namespace."""
    kind = tool.get("type")
    name = tool.get("name") or kind
    if kind == "namespace" or not isinstance(name, str) or name.startswith(MCP_PREFIXES):
        return None
    if kind == "function":
        return name, {
            "kind": "function",
            "input_schema": tool.get("parameters"),
            "description": tool.get("description"),
        }
    if kind == "custom":
        grammar = json.dumps(tool.get("format", {}).get("definition"))
        text = f"the patch text in Codex's apply_patch format (freeform; Lark grammar: {grammar})"
        schema = {
            "type": "object",
            "properties": {"input": {"type": "string", "description": text}},
        }
        return name, {
            "kind": "freeform",
            "input_schema": schema | {"required": ["input"]},
            "description": tool.get("description"),
        }
    return name, {"kind": kind, "input_schema": None, "description": tool.get("description")}


def tools_of(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = (definition_of(tool) for tool in request.get("tools", []))
    return dict(filter(None, found))


def offered(
    captures: dict[str, tuple[dict[str, Any], dict[str, Any]]],
) -> dict[str, dict[str, tuple[dict[str, Any], bool]]]:
    """Per version, each tool's definition and whether the default configuration has it."""
    per_version: dict[str, dict[str, tuple[dict[str, Any], bool]]] = {}
    for version, (default, with_mcp) in captures.items():
        tools = {name: (d, True) for name, d in tools_of(default).items()}
        for name, definition in tools_of(with_mcp).items():
            tools.setdefault(name, (definition, False))
        per_version[version] = tools
    for name, curated in CONDITIONAL.items():
        for version in curated["versions"]:
            if version not in per_version:
                continue
            like = curated.get("like")
            definition = per_version[like][name][0] if like else curated["definition"]
            per_version[version].setdefault(name, (definition | {"note": curated["note"]}, False))
    for tools in per_version.values():
        for name in BUILT_AT_RUN_TIME & tools.keys():
            definition, default = tools[name]
            tools[name] = (definition | {"description": None}, default)
    return per_version


def ranges(per_version: dict[str, dict[str, tuple[dict[str, Any], bool]]]) -> dict[str, Any]:
    """Each tool's definitions with the consecutive examined versions each held in."""
    versions = list(per_version)
    tools: dict[str, list[dict[str, Any]]] = {}
    for name in sorted({name for tools_at in per_version.values() for name in tools_at}):
        held: list[dict[str, Any]] = []
        previous: str | None = None
        for version in versions:
            entry = per_version[version].get(name)
            if entry is None:
                previous = None
                continue
            definition, default = entry
            same = held and previous is not None and held[-1]["_key"] == [definition, default]
            if same:
                held[-1]["until"] = version
            else:
                held.append(
                    {"_key": [definition, default], "since": version, "until": version}
                    | {"always_enabled": default, "aliases": []}
                    | definition
                )
            previous = version
        for definition in held:
            if definition["until"] == versions[-1]:
                definition["until"] = None
            del definition["_key"]
        tools[name] = held
    return tools


def data_file(
    captures: dict[str, tuple[dict[str, Any], dict[str, Any]]], sources: list[dict[str, Any]]
) -> dict[str, Any]:
    per_version = offered(captures)
    return {
        "description": (
            "OpenAI Codex's built-in tools by version, captured by "
            "scripts/extract_codex_tools.py from the first request each published binary "
            "sends (default configuration, then with one MCP server). since/until: inclusive "
            "range of examined versions in which a definition held (until null: still "
            "current). always_enabled: in the default configuration's request."
        ),
        "package": PACKAGE,
        "sources": [*sources, *GITHUB_SOURCES],
        "versions": [
            {"version": version, "tools": sorted(tools)} for version, tools in per_version.items()
        ],
        "tools": ranges(per_version),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, help="Keep tarballs and unpacked packages here.")
    parser.add_argument("--versions", help="Comma-separated versions (default: VERSIONS).")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    versions = args.versions.split(",") if args.versions else VERSIONS
    cache = args.cache or Path(tempfile.mkdtemp(prefix="codex-tools-"))
    cache.mkdir(parents=True, exist_ok=True)
    captures, sources = {}, []
    try:
        for version in versions:
            package, source = pack(version, cache)
            binary = binary_of(package)
            captures[version] = (capture(binary, False), capture(binary, True))
            sources.append(source)
            print(f"{version}: {sorted(tools_of(captures[version][0]))}", file=sys.stderr)
    finally:
        if args.cache is None:
            shutil.rmtree(cache, ignore_errors=True)
    args.output.write_text(json.dumps(data_file(captures, sources), indent=1) + "\n")
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
