"""Who saves a label or a decision: served, the visitor's identity (the logged-in email, the
proxy's header, or "anonymous"), never a name typed; local, the name typed, as before. The rule
is ``analysis.visitor_identity``; the pages are driven through AppTest with Streamlit's login
seeded (``AppTest.user``) as two people in turn. The proxy's header needs a real request:
``tests/test_login.py`` sends it from Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import APP, PAGE_FILES, RICH, plain
from streamlit.testing.v1 import AppTest

import analysis
from analysis import Serving, UnknownVisitor, visitor_identity

AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "a-test-cookie-secret-that-is-long-enough",
    "client_id": "tsq",
    "client_secret": "tsq-secret",
    "server_metadata_url": "http://localhost:1/.well-known/openid-configuration",
}
"""An ``[auth]`` section: AppTest never reaches its provider (the login is seeded)."""

pytestmark = pytest.mark.usefixtures("fresh_app")


def served(auth: str | None = None, **changes: object) -> Serving:
    """Shared through a proxy in front of loopback, with a data root that is a folder."""
    fields: dict[str, object] = {"address": "127.0.0.1", "root": ".", "served_flag": "1"}
    return Serving(**(fields | {"auth": auth} | changes))  # type: ignore[arg-type]


# The rule


def test_locally_no_one_is_named_for_the_visitor():
    for auth in ("login", "proxy", "none", None):
        local = Serving(address="localhost", auth=auth, login_configured=True)
        headers = [("X-Forwarded-Email", "eve@example.com")]
        assert visitor_identity(local, "eve@example.com", headers) is None


def test_with_login_the_visitor_is_the_logged_in_email():
    assert visitor_identity(served("login", login_configured=True), " ana@x.org ", []) == (
        "ana@x.org"
    )
    forged = [("X-Forwarded-Email", "ben@x.org")]  # a header does not name a logged-in visitor
    assert visitor_identity(served(login_configured=True), "ana@x.org", forged) == "ana@x.org"


def test_with_login_and_no_email_the_visitor_is_not_let_in():
    with pytest.raises(UnknownVisitor, match=r"^Your login gives this workbench no email"):
        visitor_identity(served(login_configured=True), None, [])


def test_behind_a_proxy_the_visitor_is_the_header_it_names():
    headers = [("Host", "tsq"), ("x-forwarded-email", "ana@x.org")]
    assert visitor_identity(served("proxy"), None, headers) == "ana@x.org"
    other = served("proxy", auth_header="X-Auth-Request-User")
    assert other.identity_header == "X-Auth-Request-User"
    assert visitor_identity(other, "ben@x.org", [("X-Auth-Request-User", "ana")]) == "ana"
    assert served("proxy", auth_header="  ").identity_header == analysis.DEFAULT_AUTH_HEADER


@pytest.mark.parametrize(
    ("headers", "said"),
    [
        ([], "The authenticating proxy in front of this workbench sent no X-Forwarded-Email"),
        ([("X-Forwarded-Email", "  ")], "The authenticating proxy in front of this workbench"),
        (
            [("X-Forwarded-Email", "ana@x.org"), ("X-Forwarded-Email", "ben@x.org")],
            "The request to this workbench names who you are in X-Forwarded-Email more than once",
        ),
    ],
)
def test_behind_a_proxy_a_missing_or_doubled_header_lets_no_one_in(headers, said):
    with pytest.raises(UnknownVisitor) as raised:
        visitor_identity(served("proxy"), "ana@x.org", headers)
    assert str(raised.value).startswith(said)
    assert str(raised.value).endswith("so its pages are off.")  # one sentence
    assert str(raised.value).count(". ") == 0


def test_served_to_anyone_every_visitor_is_anonymous():
    assert visitor_identity(served("none"), "ana@x.org", []) == analysis.ANONYMOUS == "anonymous"


def test_served_with_no_way_to_log_in_no_one_is_named():
    with pytest.raises(UnknownVisitor):
        visitor_identity(served(), None, [])


# The pages


def logged_in_app(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, email: str | None, **state: str
) -> AppTest:
    """The workbench shared through a proxy with Streamlit's login, ``email`` logged in (None:
    no one), run once."""
    monkeypatch.setenv("TSQ_SERVED", "1")
    monkeypatch.setenv("TSQ_DATA_ROOT", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": False} if email is None else {"is_logged_in": True, "email": email}
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def on_page(at: AppTest, path: str, **params: str) -> AppTest:
    for key, value in params.items():
        at.query_params[key] = value
    return at.switch_page(path).run()


@pytest.mark.parametrize("path", PAGE_FILES)
def test_served_with_login_a_visitor_not_logged_in_sees_no_data(path, monkeypatch, tmp_path):
    at = on_page(logged_in_app(monkeypatch, tmp_path, None), path)
    assert not at.exception
    assert [i.value for i in at.info] == ["Log in to open the workbench."]
    assert [b.label for b in at.button] == ["Log in"]
    assert not at.title
    assert not at.dataframe
    assert not at.sidebar.radio


def label_step(at: AppTest, value: str) -> AppTest:
    at.radio(key="label_value").set_value(value)
    at.text_area(key="label_reason").input(f"{value}, as I read it")
    next(b for b in at.button if b.label == "Save label").click()
    return at.run()


def test_served_with_login_each_person_labels_as_themselves(monkeypatch, tmp_path):
    """Two people log in in turn; each sees their own email, no name field, and their label is
    saved under their email, whatever name the browser session says it kept."""
    seen = {}
    for email, value in (("ana@example.org", "incorrect"), ("ben@example.org", "correct")):
        at = logged_in_app(monkeypatch, tmp_path, email, kept_labeller="someone else")
        at = on_page(at, "pages/turn.py", session=RICH, turn="3", step="0")
        assert not at.exception
        assert not [t for t in at.text_input if t.key == "label_labeller"]
        assert f"Saving as {email}" in [plain(c.value) for c in at.caption]
        assert f"Logged in as {email}" in [plain(c.value) for c in at.sidebar.caption]
        assert "Log out" in [b.label for b in at.sidebar.button]
        at = label_step(at, value)
        assert not at.exception
        assert [s.value for s in at.success] == [
            f"Saved: {email} labelled this step's tool choice {value}."
        ]
        frame = at.dataframe[-1].value
        seen = dict(zip(frame["labeller"], frame["label"], strict=True))
    assert seen == {"ana@example.org": "incorrect", "ben@example.org": "correct"}


def test_served_with_login_a_decision_is_saved_under_the_adjudicators_email(monkeypatch, tmp_path):
    at = logged_in_app(monkeypatch, tmp_path, "ana@example.org", kept_adjudicator="ben")
    at = on_page(at, "pages/adjudicate.py")
    assert not at.exception
    assert not [t for t in at.text_input if t.key == "decision_adjudicator"]
    assert "Saving as ana@example.org" in [plain(c.value) for c in at.caption]
    decided = plain(at.subheader[0].value)
    at.radio(key="decision_side").set_value("council")
    causes = at.selectbox(key="decision_cause")
    causes.set_value(causes.options[0])
    at.button(key="save_decision").click()
    at = on_page(at.run(), "pages/adjudicate.py", item=decided.split(" · ")[0])
    assert not at.exception
    history = analysis.study.decision_history(
        analysis.load_study(analysis.sample_data_dir() / "council_vs_human"),
        analysis.LabelStore(
            analysis.study.default_store_path(analysis.sample_data_dir() / "council_vs_human")
        ),
        *decided.split(" · "),
    )
    assert history["adjudicator"].to_list()[-1] == "ana@example.org"


def test_logging_out_takes_the_visitor_back_to_the_login(monkeypatch, tmp_path):
    at = logged_in_app(monkeypatch, tmp_path, "ana@example.org")
    assert not at.exception
    at.sidebar.button(key="logout").click().run()
    assert not at.exception
    assert [i.value for i in at.info] == ["Log in to open the workbench."]
    assert not at.dataframe


@pytest.mark.parametrize("path", PAGE_FILES)
def test_served_behind_a_proxy_that_names_no_one_no_page_runs(path, monkeypatch, tmp_path):
    monkeypatch.setenv("TSQ_SERVED", "1")
    monkeypatch.setenv("TSQ_DATA_ROOT", str(tmp_path))
    monkeypatch.setenv("TSQ_AUTH", "proxy")
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at = on_page(at, path)
    assert not at.exception
    assert [plain(e.value) for e in at.error] == [
        "The authenticating proxy in front of this workbench sent no X-Forwarded-Email header "
        "naming who you are, so its pages are off."
    ]
    assert not at.title
    assert not at.dataframe
    assert not at.sidebar.radio


def test_served_to_anyone_a_label_is_saved_as_anonymous(monkeypatch, tmp_path):
    monkeypatch.setenv("TSQ_SERVED", "1")
    monkeypatch.setenv("TSQ_DATA_ROOT", str(tmp_path))
    monkeypatch.setenv("TSQ_AUTH", "none")
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at = on_page(at, "pages/turn.py", session=RICH, turn="3", step="0")
    assert "Saving as anonymous" in [plain(c.value) for c in at.caption]
    at = label_step(at, "correct")
    assert [s.value for s in at.success] == [
        "Saved: anonymous labelled this step's tool choice correct."
    ]
    said = [plain(c.value) for c in at.caption if plain(c.value).startswith("Labels of this step")]
    assert said == [f"Labels of this step ({RICH}:3:0)"]  # not where the server keeps them


def test_locally_the_name_is_typed_as_before():
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at = on_page(at, "pages/turn.py", session=RICH, turn="3", step="0")
    assert [t.label for t in at.text_input if t.key == "label_labeller"] == ["Your name"]
    assert not [c for c in at.caption if c.value.startswith("Saving as")]
    assert not [b for b in at.sidebar.button if b.label == "Log out"]
