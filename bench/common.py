"""What every benchmark reports about the machine it ran on."""
from __future__ import annotations

import os
import platform
from importlib import metadata
from typing import Any, Dict, Optional, Sequence


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux)."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info(packages: Sequence[str] = (), extra: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Platform, Python, CPU, core count, load average and the versions of ``packages``."""
    versions = {}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    info: Dict[str, Any] = {
        "platform": platform.platform(), "python": platform.python_version(), "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "versions": versions,
    }
    info.update(extra or {})
    return info
