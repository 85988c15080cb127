"""The original's ``RLA.email_send.send_error``: mail a short report through an SMTP server.

Same arguments and keys as the original (``source_info['from', 'smtpserver']``,
``target_info['source_email', 'source_passward', 'targer_email']``, spelled as there).
Fixed: no SMTP debug transcript (it printed the login), no 10-second sleep, no
``sys.exit`` on a refused recipient (an :class:`EmailError` instead), and a timeout.
"""

from __future__ import annotations

import smtplib
from collections.abc import Mapping, Sequence
from email.message import EmailMessage
from typing import Any

from RLA.errors import RLAError


class EmailError(RLAError):
    """The report could not be sent."""


def _message(sub: str, info: str | Sequence[str], sender: str, target: str) -> EmailMessage:
    from RLA.manager.host import host_ip

    message = EmailMessage()
    message["From"], message["To"] = sender, target
    message["Subject"] = "ip %s, title %s " % (host_ip(), sub)
    message.set_content(info if isinstance(info, str) else "\r\n".join(str(line) for line in info))
    return message


def send_error(
    sub: str,
    info: str | Sequence[str],
    source_info: Mapping[str, Any],
    target_info: Mapping[str, Any],
    timeout: float = 30.0,
) -> None:
    """Send ``info`` (lines) with subject ``ip <this host>, title <sub>``.

    Args:
        sub: the subject's title.
        info: the body, a string or a list of lines.
        source_info: ``from`` (header) and ``smtpserver`` (``host`` or ``host:port``).
        target_info: ``source_email`` / ``source_passward`` (the login) and ``targer_email``.
        timeout: seconds for the connection and each reply.

    Raises:
        EmailError: a missing key, a refused login or recipient, or no server.
    """
    try:
        sender, server = source_info["from"], source_info["smtpserver"]
        login, password, target = (
            target_info["source_email"],
            target_info["source_passward"],
            target_info["targer_email"],
        )
    except KeyError as exc:
        raise EmailError(
            f"send_error() misses the key {exc.args[0]!r}",
            expected="source_info with from, "
            "smtpserver; target_info with source_email, source_passward, targer_email",
            found=f"{sorted(source_info)} / {sorted(target_info)}",
            fix="add the missing key (spelled as in the original)",
        ) from None
    try:
        with smtplib.SMTP(server, timeout=timeout) as smtp:
            smtp.ehlo()
            if password:
                smtp.login(login, password)
            refused = smtp.send_message(
                _message(sub, info, sender, target), from_addr=login, to_addrs=[target]
            )
    except (smtplib.SMTPException, OSError) as exc:
        found = f"{type(exc).__name__}: {exc}".replace(str(password), "***") if password else str(exc)
        raise EmailError(
            f"Could not send the report to {target} via {server}",
            expected="a reachable SMTP server that accepts the login and the recipient",
            found=found,
            fix="check smtpserver, the login and the address",
        ) from None
    if refused:
        raise EmailError(
            f"The server refused {sorted(refused)}",
            expected="every recipient accepted",
            found=str(refused),
            fix="check targer_email",
        )


__all__ = ["EmailError", "send_error"]
