"""Local by default: whether the workbench's address reaches beyond this machine, and what
serving it beyond requires (a data root).

Streamlit listens on every interface when ``server.address`` is unset; the project's
``.streamlit/config.toml`` sets ``localhost``. An address another machine can reach is a
deliberate act, and then the pages need a data root to read inside.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

LOCAL_NAMES = {"localhost", "localhost.", "ip6-localhost", "ip6-loopback"}
UNIX_SOCKET_PREFIX = "unix://"


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


def serving_refusal(address: str | None, root: str | None) -> str | None:
    """The one sentence the pages say instead of running, or None when they may run: bound
    beyond loopback (``address``), the workbench needs a data root (``root``) that is a folder.
    """
    if is_loopback(address):
        return None
    where = f"at {address}" if address else "on every network interface"
    if root is None:
        return (
            f"This workbench listens {where}, beyond this machine, and has no data root, so "
            "its pages are off: set TSQ_DATA_ROOT (or data_root in .streamlit/secrets.toml) "
            "to the folder it may read, or serve it on localhost."
        )
    if not Path(root).expanduser().is_dir():
        return (
            f"This workbench listens {where}, beyond this machine, and its data root {root} "
            "is not a folder, so its pages are off: set TSQ_DATA_ROOT (or data_root in "
            ".streamlit/secrets.toml) to the folder it may read."
        )
    return None
