"""Local by default: whether the workbench is served to others, and what serving requires (a
data root, and a way people log in).

Streamlit listens on every interface when ``server.address`` is unset; the project's
``.streamlit/config.toml`` sets ``localhost``. The app is *served* when it listens on an
address that is not loopback, or when ``TSQ_SERVED=1`` says a proxy in front of a loopback app
shares it. Served mode is the app's; the command line is always local.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

LOCAL_NAMES = {"localhost", "localhost.", "ip6-localhost", "ip6-loopback"}
UNIX_SOCKET_PREFIX = "unix://"
AuthMode = Literal["login", "proxy", "none"]
AUTH_MODES: tuple[AuthMode, ...] = get_args(AuthMode)
"""``login``: Streamlit's ``st.login`` (an ``[auth]`` section in the app's secrets);
``proxy``: an authenticating proxy is in front; ``none``: anonymous on purpose."""
DEFAULT_AUTH_HEADER = "X-Forwarded-Email"
"""The request header naming the visitor behind an authenticating proxy, unless
``TSQ_AUTH_HEADER`` names another."""
ANONYMOUS = "anonymous"
"""Who saves a label, a decision or a cause when the workbench is served to anyone
(``TSQ_AUTH=none``)."""
ANONYMOUS_WARNING = (
    "Anyone who reaches this workbench can use it: it is served without a login (TSQ_AUTH=none)."
)


def is_loopback(address: str | None) -> bool:
    """Whether a server bound to ``address`` (Streamlit's ``server.address``) can be reached
    only from this machine: ``localhost``, a loopback IP (``127.0.0.1``, ``::1``) or a Unix
    socket. Unset or empty means every interface; any other name or address is not loopback.
    """
    if not address:
        return False
    text = address.strip()
    if text.startswith(UNIX_SOCKET_PREFIX):
        return True
    if text.lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(text.removeprefix("[").removesuffix("]")).is_loopback
    except ValueError:
        return False


SERVED_WORDS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
"""What ``TSQ_SERVED`` may say (unset or empty: not served)."""


def says_served(flag: str | None) -> bool | None:
    """Whether ``TSQ_SERVED`` says a proxy shares the app; None when it says neither (another
    word, which the app refuses rather than guess)."""
    word = (flag or "").strip().lower()
    return SERVED_WORDS.get(word) if word else False


@dataclass(frozen=True)
class Serving:
    """How the app is run: where it listens, what it may read and how people log in.

    ``address`` is Streamlit's ``server.address``, ``served_flag`` is ``TSQ_SERVED``, ``root``
    the data root (``TSQ_DATA_ROOT`` or ``data_root`` in the secrets), ``auth`` is
    ``TSQ_AUTH``, ``login_configured`` whether the secrets hold an ``[auth]`` section and
    ``auth_header`` is ``TSQ_AUTH_HEADER``.
    """

    address: str | None
    root: str | None = None
    served_flag: str | None = None
    auth: str | None = None
    login_configured: bool = False
    auth_header: str | None = None
    """``TSQ_AUTH_HEADER``: the header an authenticating proxy names the visitor in."""

    @property
    def identity_header(self) -> str:
        """The header naming the visitor behind a proxy: ``TSQ_AUTH_HEADER``, else
        ``X-Forwarded-Email``."""
        return (self.auth_header or "").strip() or DEFAULT_AUTH_HEADER

    @property
    def served(self) -> bool:
        """Beyond loopback, behind a Unix socket (only a proxy in front reaches one), or said
        so by ``TSQ_SERVED`` (a word it does not know counts as served: the safe side)."""
        behind_socket = (self.address or "").strip().startswith(UNIX_SOCKET_PREFIX)
        return (
            not is_loopback(self.address)
            or behind_socket
            or says_served(self.served_flag) is not False
        )

    @property
    def auth_mode(self) -> AuthMode | None:
        """How visitors log in: ``TSQ_AUTH`` when it is one of the modes, else ``login`` when
        the secrets configure it; None when nothing (valid) says."""
        named = (self.auth or "").strip().lower()
        if named:
            return next((mode for mode in AUTH_MODES if mode == named), None)
        return "login" if self.login_configured else None

    @property
    def anonymous(self) -> bool:
        """Served to anyone who reaches it, on purpose (``TSQ_AUTH=none``)."""
        return self.served and self.auth_mode == "none"

    def _where(self) -> str:
        if not is_loopback(self.address):
            where = f"at {self.address}" if self.address else "on every network interface"
            return f"listens {where}, beyond this machine,"
        if says_served(self.served_flag):
            return "is shared through a proxy (TSQ_SERVED),"
        return f"listens at {self.address}, which only a proxy in front reaches,"

    def refusal(self) -> str | None:
        """The one sentence every page says instead of running, or None when pages may run:
        served, the workbench needs a data root that is a folder, and a way people log in."""
        if not self.served:
            return None
        if says_served(self.served_flag) is None:
            flag = (self.served_flag or "").strip()
            return f"TSQ_SERVED={flag} is not 1 or 0, so the pages of this workbench are off."
        where = self._where()
        setting = "set TSQ_DATA_ROOT (or data_root in .streamlit/secrets.toml) to the folder"
        if self.root is None:
            local = ", or serve it on localhost" if not is_loopback(self.address) else ""
            return (
                f"This workbench {where} and has no data root, so its pages are off: "
                f"{setting} it may read{local}."
            )
        if not Path(self.root).expanduser().is_dir():
            return (
                f"This workbench {where} and its data root {self.root} is not a folder, so "
                f"its pages are off: {setting} it may read."
            )
        return self._auth_refusal(where)

    def _auth_refusal(self, where: str) -> str | None:
        mode = self.auth_mode
        if self.auth and mode is None:
            return (
                f"TSQ_AUTH={self.auth.strip()} is not one of login, proxy or none, so the "
                "pages of this workbench are off."
            )
        if mode is None:
            return (
                f"This workbench {where} and nothing says how people log in, so its pages are "
                "off: give .streamlit/secrets.toml an [auth] section (Streamlit's login), or "
                "set TSQ_AUTH=proxy when an authenticating proxy is in front, or TSQ_AUTH=none "
                "to let anyone who reaches it in."
            )
        if mode == "proxy" and not is_loopback(self.address):
            return (
                f"TSQ_AUTH=proxy says an authenticating proxy is in front, but this workbench "
                f"{where} where anyone reaches it without the proxy, so its pages are off: "
                "listen on localhost (or a Unix socket) behind the proxy."
            )
        if mode == "login" and not self.login_configured:
            return (
                "TSQ_AUTH=login needs an [auth] section in .streamlit/secrets.toml (Streamlit's "
                "login), so the pages of this workbench are off."
            )
        return None


class UnknownVisitor(Exception):
    """A served visitor the workbench cannot name: its message is the one sentence a page says
    instead of running."""


def visitor_identity(
    serving: Serving, user_email: str | None, headers: Iterable[tuple[str, str]]
) -> str | None:
    """Who the visitor is, the name every label, decision and cause they save is saved under.

    Local (not served): None, and the person types a name. Served, by how people log in:
    ``login``, the email of the logged-in visitor (``user_email``, Streamlit's ``st.user.email``);
    ``proxy``, the value of the header the proxy names them in (``serving.identity_header``,
    one value among the request's ``headers``, as (name, value) pairs, a name repeated as often
    as it was sent); ``none``, ``"anonymous"``. Raises ``UnknownVisitor`` when a served visitor
    has no identity (no email, the header missing, empty or sent with two values), or the
    serving has no valid way people log in (its ``refusal`` says that first).
    """
    if not serving.served:
        return None
    mode = serving.auth_mode
    if mode == "none":
        return ANONYMOUS
    if mode == "login":
        email = (user_email or "").strip()
        if not email:
            raise UnknownVisitor(
                "Your login gives this workbench no email address, so its pages are off: log "
                "in with an account that has one, or ask the operator to have the identity "
                "provider share it."
            )
        return email
    if mode == "proxy":
        name = serving.identity_header
        values = {value.strip() for key, value in headers if key.lower() == name.lower()}
        if len(values) > 1:
            raise UnknownVisitor(
                f"The request to this workbench names who you are in {name} more than once, "
                "with different values, so its pages are off."
            )
        given = next(iter(values), "")
        if not given:
            raise UnknownVisitor(
                f"The authenticating proxy in front of this workbench sent no {name} header "
                "naming who you are, so its pages are off."
            )
        return given
    raise UnknownVisitor("Nothing says how people log in to this workbench, so its pages are off.")
