"""Every spelling of a secret, produced by the real encoders (independent of RLA.redaction)."""
from __future__ import annotations

import csv
import io
import json
import re
import shlex
import subprocess
import urllib.parse
from typing import Dict

import yaml


def _inside(text: str, quote: str) -> str:
    """The text between the first and the last ``quote`` (all of it when an encoder did not quote)."""
    if text.count(quote) < 2:
        return text.strip()
    return text[text.index(quote) + 1:text.rindex(quote)]


def _bash_q(value: str) -> str:
    done = subprocess.run(["bash", "-c", 'printf %q "$1"', "_", value], capture_output=True, text=True,
                          timeout=30, check=True, env={"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"})
    return done.stdout


def _csv(value: str) -> str:
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL).writerow([value])
    return _inside(buf.getvalue(), '"')


def encodings(value: str) -> Dict[str, str]:
    """Name → the secret as that encoder writes it (outer quotes left off)."""
    return {
        "raw": value,
        "json": json.dumps(value)[1:-1],
        "json_unicode": json.dumps(value, ensure_ascii=False)[1:-1],
        "yaml_single": _inside(yaml.safe_dump(value, default_style="'", allow_unicode=True, width=1 << 30), "'"),
        "yaml_double": _inside(yaml.safe_dump(value, default_style='"', width=1 << 30), '"'),
        "yaml_double_unicode": _inside(yaml.safe_dump(value, default_style='"', allow_unicode=True,
                                                      width=1 << 30), '"'),
        "csv": _csv(value),
        "shell_single": _inside(shlex.quote(value), "'"),
        "shell_double": re.sub(r'(["\\$`])', r"\\\1", value),
        "shell_printf_q": _bash_q(value),
        "url": urllib.parse.quote(value, safe=""),
        "url_path": urllib.parse.quote(value),
        "url_plus": urllib.parse.quote_plus(value),
        "repr": repr(value)[1:-1],
        "repr_bytes": repr(value.encode("utf-8"))[2:-1],
    }


#: A secret whose every encoding above differs from the others.
NASTY = "Yaml'Quote\"$x\\y é/ +1"
