"""Facts about the machine and process a run executes on (IP, host, versions, command)."""
from __future__ import annotations

import os
import platform
import re
import socket
import sys
from typing import Dict, List, Optional

_SECRET_FLAG = re.compile(r"(pass(word|wd)?|token|secret|api[-_]?key|private[-_]?key)", re.I)


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


def redacted_argv(argv: Optional[List[str]] = None, secrets: Optional[List[str]] = None) -> List[str]:
    """The command line with values of password/token-like options hidden."""
    argv = list(sys.argv if argv is None else argv)
    secrets = [s for s in (secrets or []) if s]
    out: List[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append("<redacted>")
            hide_next = False
            continue
        key, eq, _ = arg.partition("=")
        if eq and _SECRET_FLAG.search(key):
            out.append(f"{key}=<redacted>")
            continue
        if arg.startswith("-") and _SECRET_FLAG.search(arg):
            hide_next = True
        for secret in secrets:
            arg = arg.replace(secret, "<redacted>")
        out.append(arg)
    return out


def process_facts() -> Dict[str, object]:
    """Host name, pid, python version and working directory."""
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cwd": os.getcwd(),
    }
