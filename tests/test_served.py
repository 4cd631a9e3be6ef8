"""Served, a visitor's endpoint never receives the server's key: a loopback "attacker" server
records every request it gets, and every path of the app that can name an endpoint (the Judge
page, an uploaded spec, a council config) is tried against it, while an endpoint the operator
lists still works with the key it names. Served without a way to log in, no page runs."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import BAD, PAGE_FILES, open_app, open_page, plain
from fake_anthropic import API_KEY, FakeAnthropic
from loopback import JSONHandler, LoopbackServer

import analysis
from analysis.judge import JudgeConfig, spec_toml
from analysis.llm import (
    NO_KEY,
    EndpointError,
    EndpointRules,
    ListedEndpoint,
    LLMConfig,
    LLMError,
    endpoints_from_env,
    open_client,
)

OPERATOR_KEY = "sk-operator-secret-0001"
"""The server's own Anthropic key: it may go to Anthropic's API only."""

pytestmark = pytest.mark.usefixtures("fresh_app")


class Attacker(LoopbackServer):
    """Answers every request with an empty JSON object, and keeps each one's method, path and
    headers."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        lock = threading.Lock()
        seen = self.requests

        class Handler(JSONHandler):
            def _record(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
                with lock:
                    seen.append(
                        {"method": self.command, "path": self.path, "body": body}
                        | {"headers": dict(self.headers.items())}
                    )
                self._send(200, {})

            do_GET = do_POST = _record

            def log_message(self, *args: object) -> None:
                pass

        self._listen(Handler)

    def keys_received(self) -> set[str]:
        return {
            value.removeprefix("Bearer ")
            for request in self.requests
            for name, value in request["headers"].items()
            if name.lower() in ("x-api-key", "authorization")
        }


@pytest.fixture
def attacker():
    with Attacker() as server:
        yield server


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The workbench shared through a proxy (``TSQ_SERVED=1``), open to anyone on purpose,
    with a data root and the operator's Anthropic key in its environment."""
    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.setenv("TSQ_SERVED", "1")
    monkeypatch.setenv("TSQ_AUTH", "none")
    monkeypatch.setenv("TSQ_DATA_ROOT", str(root))
    monkeypatch.setenv("ANTHROPIC_API_KEY", OPERATOR_KEY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return root


def spec_file(base_url: str) -> bytes:
    """The built-in judge spec, pointed at ``base_url``, as a file a visitor uploads."""
    spec = analysis.default_spec("claude-judge-4-5").with_changes(base_url=base_url)
    return spec_toml(spec).encode()


def refusal(url: str, names: str = "none are listed", named: str = "The endpoint") -> str:
    return (
        f"{named} {url} is not one this workbench's operator allows, so no request goes "
        f"to it: use the provider's own API or a listed endpoint ({names})."
    )


# The rules, as the library applies them


def test_each_key_goes_only_to_its_own_provider_or_the_listed_endpoint_that_names_it():
    rules = EndpointRules(
        (
            ListedEndpoint(name="proxy", base_url="http://127.0.0.1:8001/v1", key="PROXY_KEY"),
            ListedEndpoint(name="local", base_url="http://127.0.0.1:8002/v1"),
        ),
        {"ANTHROPIC_API_KEY": OPERATOR_KEY, "OPENAI_API_KEY": "sk-openai", "PROXY_KEY": "pk"},
    )
    assert rules.refusal("anthropic", None) is None
    assert rules.key_for("anthropic", None) == OPERATOR_KEY
    assert rules.refusal("anthropic", "https://API.anthropic.com/") is None
    assert rules.key_for("openai", "https://api.openai.com/v1") == "sk-openai"
    assert rules.key_for("gemini", None) is None  # the operator has no Gemini key
    for elsewhere in ("http://api.anthropic.com", "https://api.anthropic.com.evil.test"):
        assert rules.refusal("anthropic", elsewhere) == refusal(elsewhere, "proxy, local")
    assert rules.refusal("openai", "https://api.anthropic.com") is not None  # another's host
    assert rules.refusal("anthropic", "https://api.anthropic.com:8443") is not None  # a port
    for same in ("http://127.0.0.1:8001/v1/", "HTTP://127.0.0.1:8001/v1"):
        assert rules.refusal("anthropic", same) is None
        assert rules.key_for("anthropic", same) == "pk"
    assert rules.key_for("openai", "http://127.0.0.1:8002/v1") == NO_KEY  # names no key
    assert rules.refusal("openai", "http://127.0.0.1:8002/v2") is not None  # another path
    assert rules.refusal("openai", "http://127.0.0.1:8003/v1") is not None  # another port
    assert OPERATOR_KEY not in repr(rules)


def test_the_operators_list_from_the_environment_reads_or_says_what_is_wrong():
    listed = endpoints_from_env(" vllm=http://gpu-box:8000/v1 VLLM_KEY , ollama=http://x:11434/v1,")
    assert [(e.name, e.base_url, e.key) for e in listed] == [
        ("vllm", "http://gpu-box:8000/v1", "VLLM_KEY"),
        ("ollama", "http://x:11434/v1", None),
    ]
    for bad, said in [
        ("vllm", "TSQ_ENDPOINTS: 'vllm' is not NAME=URL or NAME=URL KEY_VARIABLE."),
        ("v=ftp://x", "TSQ_ENDPOINTS: not an endpoint (base_url: Value error, 'ftp://x' is not"),
        ("=http://x", "TSQ_ENDPOINTS: not an endpoint (name:"),
    ]:
        with pytest.raises(EndpointError) as caught:
            endpoints_from_env(bad)
        assert str(caught.value).startswith(said)
        assert "\n" not in str(caught.value)


def test_a_client_with_rules_refuses_an_unlisted_endpoint_before_any_request(attacker):
    rules = EndpointRules((), {"ANTHROPIC_API_KEY": OPERATOR_KEY, "OPENAI_API_KEY": "sk-o"})
    for model in ("claude-judge-4-5", "openai:gpt-4o", "gemini:gemini-2.5-pro"):
        config = LLMConfig(model=model, base_url=attacker.url, endpoints=rules)
        with pytest.raises(LLMError, match="is not one this workbench's operator allows"):
            open_client(config)
    judge = JudgeConfig(model="claude-judge-4-5", base_url=attacker.url, endpoints=rules)
    units = analysis.judge_inputs(analysis.load([analysis.sample_data_dir()]).sessions[:1], "step")
    with pytest.raises(analysis.llm.LLMError, match="operator allows"):
        asyncio.run(analysis.judge.judge_rendered(units, judge))
    assert attacker.requests == []


def test_a_listed_endpoint_that_names_no_key_never_receives_the_environments(attacker):
    rules = EndpointRules(
        (ListedEndpoint(name="open", base_url=attacker.url),),
        {"ANTHROPIC_API_KEY": OPERATOR_KEY},
    )
    judge = JudgeConfig(model="claude-judge-4-5", base_url=attacker.url, endpoints=rules)
    units = analysis.judge_inputs(analysis.load([analysis.sample_data_dir()]).sessions[:1], "step")
    with pytest.raises(analysis.llm.LLMError):  # it answers nothing of use, but it is asked
        asyncio.run(
            analysis.judge.judge_rendered(units, judge.model_copy(update={"max_retries": 0}))
        )
    assert attacker.requests
    assert attacker.keys_received() == {NO_KEY}


def test_a_council_member_at_an_unlisted_endpoint_is_refused_before_any_request(attacker):
    config = analysis.council.read_council_config(analysis.council.example_config_path())
    member = config.stage1[0].model_copy(update={"base_url": attacker.url})
    config = config.model_copy(update={"stage1": [member, *config.stage1[1:]]})
    rules = EndpointRules((), {"ANTHROPIC_API_KEY": OPERATOR_KEY})
    said = analysis.council.endpoint_refusal(config, rules)
    assert said == refusal(attacker.url, named=f"Council member {member.model}'s endpoint")
    assert analysis.council.endpoint_refusal(config, None) is None  # local: the user's choice
    sessions = analysis.load([analysis.sample_data_dir() / "transcripts"]).sessions[:1]
    with pytest.raises(LLMError, match="operator allows"):
        asyncio.run(analysis.council.run_council(sessions, config, endpoints=rules))
    assert attacker.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "https://[api.anthropic.com]",
        "http://[::1",
        "https://evil.test\u2100@api.anthropic.com",
        "https://api.anthropic.com@evil.test",
        "https://api.anthropic.com:443:1",
        "https://api.anthropic.com/v1?x=1",
        "https://api.anthropic.com/v1#x",
        "https://api.anthropic.com\\@evil.test",
        "https://api.anthropic.com/\n",
        "https://api.anthropic.\tcom",
    ],
)
def test_a_url_that_is_not_plain_is_neither_the_providers_nor_listable(url):
    """HTTP clients and ``urlsplit`` may read such a URL differently: refused, never raised."""
    rules = EndpointRules((ListedEndpoint(name="proxy", base_url="http://127.0.0.1:8001/v1"),), {})
    for provider in ("anthropic", "openai", "gemini"):
        assert rules.refusal(provider, url) is not None
    if url.strip() != url:  # the operator's list is read stripped, as TOML and env values come
        assert ListedEndpoint(name="odd", base_url=url).base_url == url.strip()
        return
    with pytest.raises(ValueError, match="is not a plain http"):
        ListedEndpoint(name="odd", base_url=url)


def test_served_the_sdk_is_given_the_providers_own_url_not_its_environments(monkeypatch, attacker):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", attacker.url)  # read by the SDK when none is given
    monkeypatch.setenv("OPENAI_BASE_URL", attacker.url)
    rules = EndpointRules((), {"ANTHROPIC_API_KEY": OPERATOR_KEY, "OPENAI_API_KEY": "sk-o"})
    for model, own in [
        ("claude-judge-4-5", "https://api.anthropic.com"),
        ("openai:gpt-4o", "https://api.openai.com/v1"),
    ]:
        client = open_client(LLMConfig(model=model, endpoints=rules))
        assert client.provider.base_url.rstrip("/") == own
        asyncio.run(client.close())
    assert attacker.requests == []


def test_a_listed_endpoint_that_redirects_sends_nothing_on(attacker):
    class Redirect(JSONHandler):
        def do_GET(self) -> None:
            self.send_response(307)
            self.send_header("Location", attacker.url + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    class Redirector(LoopbackServer):
        def __init__(self) -> None:
            self._listen(Redirect)

    with Redirector() as redirector:
        rules = EndpointRules((ListedEndpoint(name="proxy", base_url=redirector.url),), {})
        judge = JudgeConfig(
            model="claude-judge-4-5", base_url=redirector.url, endpoints=rules, max_retries=0
        )
        sessions = analysis.load([analysis.sample_data_dir() / "transcripts"]).sessions[:1]
        with pytest.raises(analysis.llm.LLMError):
            asyncio.run(
                analysis.judge.judge_rendered(analysis.judge_inputs(sessions, "step"), judge)
            )
    assert attacker.requests == []


# The app, served


def test_served_the_judge_page_offers_the_listed_endpoints_not_a_text_field(served, monkeypatch):
    monkeypatch.setenv("TSQ_ENDPOINTS", "team-vllm=http://127.0.0.1:9/v1")
    at = open_page("pages/judge.py")
    assert not at.exception
    assert "judge_base_url" not in [t.key for t in at.text_input]
    (endpoint,) = [s for s in at.selectbox if s.label == "Endpoint"]
    assert endpoint.options == ["The provider's own API", "team-vllm · http://127.0.0.1:9/v1"]
    assert endpoint.value == "The provider's own API"
    assert [w.value for w in at.warning][:1] == [analysis.ANONYMOUS_WARNING]


def test_served_an_uploaded_spec_naming_an_unlisted_endpoint_is_refused(served, attacker):
    at = open_page("pages/judge.py", session=BAD)
    at.file_uploader(key="judge_spec_file").set_value(
        [("judge.toml", spec_file(attacker.url), "application/toml")]
    ).run()
    assert not at.exception
    assert [plain(e.value) for e in at.error] == [
        refusal(attacker.url, named="The judge spec's endpoint")
    ]
    assert "judge_run" not in [b.key for b in at.button]
    assert attacker.requests == []


def test_locally_an_uploaded_spec_keeps_its_endpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        at = open_page("pages/judge.py", session=BAD)
        at.file_uploader(key="judge_spec_file").set_value(
            [("judge.toml", spec_file(fake.url), "application/toml")]
        ).run()
        assert at.text_input(key="judge_base_url").value == fake.url
        at.button(key="judge_run").click().run()
        assert not at.exception
        assert len(fake.script.messages) == 12  # 4 steps x 3 votes


def test_served_a_council_config_naming_an_unlisted_endpoint_is_refused(served, attacker):
    example = analysis.council.example_config_path().read_text()
    first = example.index("[[stage1]]")
    config = served / "council.toml"
    config.write_text(
        example[:first] + f'[[stage1]]\nbase_url = "{attacker.url}"\n' + example[first + 11 :]
    )
    at = open_page("pages/judge.py", session=BAD)
    at.text_input(key="council_config").set_value(str(config)).run()
    assert not at.exception
    (error,) = at.error
    (member,) = [line for line in example[first:].splitlines() if line.startswith("model")][:1]
    model = member.split('"')[1]
    assert plain(error.value) == refusal(attacker.url, named=f"Council member {model}'s endpoint")
    assert "council_run" not in [b.key for b in at.button]
    assert attacker.requests == []


@pytest.mark.slow
def test_served_a_listed_endpoint_still_works_with_the_key_it_names(served, monkeypatch):
    with FakeAnthropic() as fake:
        monkeypatch.setenv("TSQ_ENDPOINTS", f"judge-proxy={fake.url} PROXY_KEY")
        monkeypatch.setenv("PROXY_KEY", API_KEY)  # the fake accepts this key only
        at = open_page("pages/judge.py", session=BAD)
        # priced (as Haiku): served, a run of unknown cost is refused under the spending caps
        at.text_input(key="judge_model").set_value("claude-haiku-judge-3").run()
        (endpoint,) = [s for s in at.selectbox if s.label == "Endpoint"]
        endpoint.set_value(f"judge-proxy · {fake.url}").run()
        at.button(key="judge_run").click().run()
        assert not at.exception
        assert not at.error
        said = plain(at.success[0].value)
        assert "full: 4 steps in 4 turns, mean turn TSQ 0.25" in said
        assert len(fake.script.messages) == 12  # each request carried PROXY_KEY, or it was 401


def test_served_an_unreadable_list_of_endpoints_stops_model_runs_in_one_sentence(
    served, monkeypatch
):
    monkeypatch.setenv("TSQ_ENDPOINTS", "oops")
    at = open_page("pages/judge.py", session=BAD)
    assert not at.exception
    assert [plain(e.value) for e in at.error][:1] == [
        "TSQ_ENDPOINTS: 'oops' is not NAME=URL or NAME=URL KEY_VARIABLE."
    ]


# Served without a way to log in


@pytest.mark.parametrize("path", PAGE_FILES)
def test_served_without_a_login_configured_no_page_runs(path, tmp_path, monkeypatch):
    monkeypatch.setenv("TSQ_SERVED", "1")
    monkeypatch.setenv("TSQ_DATA_ROOT", str(tmp_path))
    at = open_page(path, session=BAD)
    assert not at.exception
    assert [plain(e.value) for e in at.error] == [
        "This workbench is shared through a proxy (TSQ_SERVED), and nothing says how people "
        "log in, so its pages are off: give .streamlit/secrets.toml an [auth] section "
        "(Streamlit's login), or set TSQ_AUTH=proxy when an authenticating proxy is in front, "
        "or TSQ_AUTH=none to let anyone who reaches it in."
    ]
    assert not at.title
    assert not at.dataframe
    assert not at.sidebar.radio  # no data source is offered


@pytest.mark.parametrize("path", PAGE_FILES)
def test_served_to_anyone_on_purpose_every_page_says_so(path, served):
    at = open_page(path)
    assert not at.exception
    assert at.warning[0].value == analysis.ANONYMOUS_WARNING


def test_locally_no_page_says_it_is_open_to_anyone(monkeypatch):
    monkeypatch.setenv("TSQ_AUTH", "none")
    at = open_app()
    assert analysis.ANONYMOUS_WARNING not in [w.value for w in at.warning]


def test_the_attacker_records_what_it_receives(attacker):
    """The check above can fail: a request sent to it is seen, with its key."""
    import httpx

    httpx.post(f"{attacker.url}/v1/messages", headers={"x-api-key": "k"}, json={"a": 1})
    assert [r["path"] for r in attacker.requests] == ["/v1/messages"]
    assert attacker.keys_received() == {"k"}
    assert json.loads(attacker.requests[0]["body"]) == {"a": 1}
