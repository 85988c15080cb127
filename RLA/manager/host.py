"""Facts about the machine and process a run executes on (IP, host, versions, command)."""

from __future__ import annotations

import os
import platform
import socket
import sys
from typing import TYPE_CHECKING, Dict, List, Optional

if TYPE_CHECKING:
    from RLA.redaction import RedactionPolicy


def host_ip() -> str:
    """The IP address of the interface that routes outwards; ``noip`` when unknown.

    A UDP socket is connected (no packet is sent) to learn the local address.
    """
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.settimeout(0.2)
            sock.connect(("10.255.255.255", 1))
            address = sock.getsockname()[0]
    except OSError:
        address = ""
    if not address or address.startswith("0."):
        try:
            address = socket.gethostbyname(socket.gethostname())
        except OSError:
            address = ""
    return address or "noip"


def package_versions(names: Optional[List[str]] = None) -> Dict[str, str]:
    """Installed versions of RLA's main dependencies (and torch if imported)."""
    from importlib import metadata

    from RLA.version import __version__

    wanted = names or ["numpy", "pandas", "tensorboardX", "pyyaml", "gitpython"]
    if "torch" in sys.modules:
        wanted.append("torch")
    versions = {"RLA": __version__}
    for name in wanted:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def redacted_argv(
    argv: Optional[List[str]] = None,
    secrets: Optional[List[str]] = None,
    policy: Optional["RedactionPolicy"] = None,
) -> List[str]:
    """The command line (default ``sys.argv``) with secret options and known secret values hidden.

    Args:
        argv: the arguments to show.
        secrets: more known secret values.
        policy: the run's :class:`RLA.redaction.RedactionPolicy` (default: the default key patterns).
    """
    from RLA.redaction import RedactionPolicy

    if policy is None:
        policy = RedactionPolicy(values=secrets or ())
    else:
        policy.add_values(secrets or ())
    return policy.redact_argv(list(sys.argv if argv is None else argv))


def process_facts() -> Dict[str, object]:
    """Host name, pid, python version and working directory."""
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cwd": os.getcwd(),
    }
