"""Who is in, for real: the workbench served on loopback (``TSQ_SERVED=1``) with Streamlit's
login against a real OpenID Connect provider (``oidc-provider-mock``, on its own loopback
port), driven in Chromium. Not logged in, every page asks to log in and shows no data; logged
in, the pages work, the sidebar shows the email and a label is saved under it; logged out, the
login is back; an identity cookie that is missing or forged lets no one in. Behind an
authenticating proxy, the header a request carries names who saves, and a request without it
sees one sentence."""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import RICH, launch_chromium, needs_chromium, page_has_run
from streamlit_server import Server, reserved_port, streamlit_command, streamlit_server

import analysis

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]

PAGES = ["", "trends", "session", "turn", "catalog", "judge", "agreement", "adjudicate"]
"""Every page's URL path (the Overview is the app's own)."""
COOKIE = "_streamlit_user"
"""Where Streamlit keeps a logged-in visitor's identity, signed with the ``cookie_secret``."""
ASK_TO_LOG_IN = "Log in to open the workbench."
TURN = f"turn?session={RICH}&turn=3&step=0"
ITEM = f"{RICH}:3:0"


@dataclass
class Workbench:
    server: Server
    data: Path
    """The server's own data folder (``TSQ_DATA_DIR``): the label stores."""

    def labels(self) -> dict[str, str]:
        """The step's saved labels (in the stores of the server's data folder), by who saved
        them."""
        stores = [analysis.LabelStore(path) for path in self.data.glob("adjudications/*.sqlite")]
        labels = [label for store in stores for label in store.step_labels()]
        return {label.labeller: label.value for label in labels if label.item_id == ITEM}


def secrets_file(folder: Path, app_port: int, provider_port: int) -> Path:
    """The test server's secrets (outside the checkout): an ``[auth]`` section naming the
    provider it logs in with."""
    path = folder / "secrets.toml"
    path.write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{app_port}/oauth2callback"\n'
        'cookie_secret = "a-cookie-secret-for-this-test-only-0123456789"\n'
        'client_id = "tsq-workbench"\n'
        'client_secret = "tsq-workbench-secret"\n'
        f'server_metadata_url = "http://localhost:{provider_port}/.well-known/openid-configuration"\n'
    )
    return path


@pytest.fixture
def login_workbench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workbench]:
    """The workbench with Streamlit's login, its provider a real one on loopback."""
    import oidc_provider_mock

    # Both ends speak plain HTTP on loopback: Authlib allows it only when told.
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")
    root, data = tmp_path / "root", tmp_path / "data"
    root.mkdir()
    with ExitStack() as held:
        provider_port = held.enter_context(reserved_port())
        app_port = held.enter_context(reserved_port())
        held.enter_context(oidc_provider_mock.run_server_in_thread(port=provider_port))
        secrets = secrets_file(tmp_path, app_port, provider_port)
        command = streamlit_command(
            "--server.address", "127.0.0.1", "--secrets.files", str(secrets)
        )
        env = {
            "TSQ_SERVED": "1",
            "TSQ_DATA_ROOT": str(root),
            "TSQ_DATA_DIR": str(data),
            "AUTHLIB_INSECURE_TRANSPORT": "1",
        }
        server = held.enter_context(streamlit_server(command, env=env, port=app_port))
        yield Workbench(server, data)


def asks_to_log_in(tab: Any, url: str) -> None:
    """The page at ``url`` asks to log in and shows nothing of the data."""
    from playwright.sync_api import expect

    tab.goto(url)
    expect(tab.get_by_text(ASK_TO_LOG_IN)).to_be_visible(timeout=30_000)
    page_has_run(tab)
    expect(tab.get_by_role("button", name="Log in")).to_be_visible()
    assert tab.get_by_test_id("stDataFrame").count() == 0
    assert tab.get_by_test_id("stHeading").count() == 0
    assert tab.get_by_test_id("stRadio").count() == 0  # no data source is offered
    assert tab.get_by_text("Log out").count() == 0


def log_in(tab: Any, email: str) -> None:
    """Through the provider's own form: the subject typed is the email it gives."""
    from playwright.sync_api import expect

    tab.get_by_role("button", name="Log in").click()
    tab.locator("input[name=sub]").fill(email)
    tab.get_by_role("button", name="Authorize").click()
    expect(tab.get_by_text(f"Logged in as {email}")).to_be_visible(timeout=30_000)
    page_has_run(tab)


def label_step(tab: Any, value: str) -> None:
    from playwright.sync_api import expect

    form = tab.get_by_test_id("stForm")
    form.get_by_text(value, exact=True).click()
    form.get_by_role("button", name="Save label").click()
    expect(tab.get_by_text(f"labelled this step's tool choice {value}")).to_be_visible(
        timeout=30_000
    )


def forged(cookie: dict[str, Any], email: str) -> dict[str, Any]:
    """The identity cookie (itsdangerous' signed form: ``[.]payload.timestamp.signature``,
    the payload zlib-compressed when it starts with a dot) with another email written into its
    payload, its timestamp and signature kept."""
    compressed = cookie["value"].startswith(".")
    payload, *signed = cookie["value"].removeprefix(".").split(".")
    raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    signed_text = json.loads(zlib.decompress(raw) if compressed else raw)  # the claims' JSON
    claims = json.loads(signed_text)
    assert claims["email"] != email
    claims["email"] = email
    raw = json.dumps(json.dumps(claims), separators=(",", ":")).encode()
    encoded = base64.urlsafe_b64encode(zlib.compress(raw) if compressed else raw)
    value = "." * compressed + ".".join([encoded.decode().rstrip("="), *signed])
    return cookie | {"value": value}


def test_people_log_in_label_as_themselves_and_log_out(login_workbench, screenshots):
    from playwright.sync_api import expect, sync_playwright

    url = login_workbench.server.url
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        visitor = chromium.new_context(viewport={"width": 1400, "height": 1000})
        tab = visitor.new_page()

        for page in PAGES:  # not logged in: every page asks, none shows data
            asks_to_log_in(tab, f"{url}/{page}")
        tab.screenshot(path=screenshots / "1-not-logged-in.png")

        log_in(tab, "ana@example.org")  # from the Adjudicate page: back to the app
        tab.screenshot(path=screenshots / "2-logged-in.png")
        for page in PAGES:  # logged in: every page runs from the sidebar, and says who is in
            tab.locator(f'[data-testid="stPageLink-NavLink"][href="{page}"]').click()
            expect(tab.get_by_text("Logged in as ana@example.org")).to_be_visible(timeout=60_000)
            page_has_run(tab)
            assert tab.get_by_test_id("stHeading").count() > 0, page
            assert tab.get_by_test_id("stException").count() == 0, page
            assert tab.get_by_text(ASK_TO_LOG_IN).count() == 0, page

        tab.goto(f"{url}/{TURN}")
        expect(tab.get_by_text("Saving as ana@example.org")).to_be_visible(timeout=60_000)
        page_has_run(tab)
        assert tab.get_by_label("Your name").count() == 0
        label_step(tab, "incorrect")
        tab.screenshot(path=screenshots / "3-labelled.png", full_page=True)
        assert login_workbench.labels() == {"ana@example.org": "incorrect"}

        identity = next(c for c in visitor.cookies() if c["name"] == COOKIE)

        # A forged cookie (another email, the signature kept) lets no one in.
        stranger = chromium.new_context()
        stranger.add_cookies([forged(identity, "eve@example.org")])
        asks_to_log_in(stranger.new_page(), f"{url}/{TURN}")
        stranger.pages[0].screenshot(path=screenshots / "4-forged-cookie.png")
        stranger.close()

        # Without the cookie, the same browser is no one.
        visitor.clear_cookies()
        asks_to_log_in(tab, f"{url}/{TURN}")
        visitor.add_cookies([identity])

        # Ben logs in elsewhere and labels the same step: each label is its own person's.
        other = chromium.new_context().new_page()
        other.goto(url)
        log_in(other, "ben@example.org")
        other.goto(f"{url}/{TURN}")
        expect(other.get_by_text("Saving as ben@example.org")).to_be_visible(timeout=60_000)
        page_has_run(other)
        label_step(other, "correct")
        assert login_workbench.labels() == {
            "ana@example.org": "incorrect",
            "ben@example.org": "correct",
        }

        tab.goto(f"{url}/adjudicate")  # Ana, still logged in
        expect(tab.get_by_text("Saving as ana@example.org")).to_be_visible(timeout=60_000)
        page_has_run(tab)
        tab.screenshot(path=screenshots / "5-adjudicate.png", full_page=True)

        tab.get_by_role("button", name="Log out").click()
        # The provider is told too (its end-session endpoint), and sends the browser back.
        tab.get_by_role("button", name="End session").click()
        expect(tab.get_by_text(ASK_TO_LOG_IN)).to_be_visible(timeout=30_000)
        page_has_run(tab)
        tab.screenshot(path=screenshots / "6-logged-out.png")
        assert COOKIE not in {c["name"] for c in visitor.cookies()}
        asks_to_log_in(tab, f"{url}/{TURN}")
        chromium.close()


@pytest.fixture
def proxy_workbench(tmp_path: Path) -> Iterator[Workbench]:
    """The workbench behind an authenticating proxy (``TSQ_AUTH=proxy``) on loopback."""
    root, data = tmp_path / "root", tmp_path / "data"
    root.mkdir()
    env = {
        "TSQ_SERVED": "1",
        "TSQ_AUTH": "proxy",
        "TSQ_DATA_ROOT": str(root),
        "TSQ_DATA_DIR": str(data),
    }
    with streamlit_server(env=env) as server:
        yield Workbench(server, data)


def test_behind_a_proxy_the_header_names_who_saves(proxy_workbench, screenshots):
    """Two requests carrying two people's header each save as their own; one without it is
    told so in one sentence and sees no data."""
    from playwright.sync_api import expect, sync_playwright

    url = proxy_workbench.server.url
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        nobody = chromium.new_page()
        nobody.goto(f"{url}/{TURN}")
        expect(nobody.get_by_text("sent no X-Forwarded-Email header")).to_be_visible(timeout=30_000)
        page_has_run(nobody)
        assert nobody.get_by_test_id("stDataFrame").count() == 0
        assert nobody.get_by_test_id("stHeading").count() == 0
        nobody.screenshot(path=screenshots / "1-no-header.png")

        for email, value in (("ana@example.org", "incorrect"), ("ben@example.org", "correct")):
            person = chromium.new_context(extra_http_headers={"X-Forwarded-Email": email})
            tab = person.new_page()
            tab.goto(f"{url}/{TURN}")
            expect(tab.get_by_text(f"Saving as {email}")).to_be_visible(timeout=60_000)
            page_has_run(tab)
            assert tab.get_by_label("Your name").count() == 0
            label_step(tab, value)
            tab.screenshot(path=screenshots / f"2-{email}.png", full_page=True)
            person.close()
        chromium.close()
    assert proxy_workbench.labels() == {
        "ana@example.org": "incorrect",
        "ben@example.org": "correct",
    }
