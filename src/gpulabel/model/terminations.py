"""What a pod's containers last said about failing: the messages of their waiting and terminated states.

The kubelet writes the runtime's error on a container that could not be created or started (``state.waiting``
``RunContainerError``/``CreateContainerError`` with the error as message; after a failed start,
``lastState.terminated`` ``StartError`` with it), and a container's own termination message
(``/dev/termination-log``, or its last log lines under ``terminationMessagePolicy: FallbackToLogsOnError``)
on ``terminated.message``. Kept only where one is set, init containers first, and redacted
(``model/redaction.py``): checks quote them (``check -o wide``), and a runtime's error can hold a registry URL's
password or a flag's value as well as a log line can.
"""

from __future__ import annotations

from typing import Any

from gpulabel.model.redaction import redact_text

__all__ = ["container_messages"]


def _message(state: Any, which: str) -> str:
    part = state.get(which) if isinstance(state, dict) else None
    message = part.get("message") if isinstance(part, dict) else None
    return redact_text(message) if isinstance(message, str) and message else ""


def container_messages(status: Any) -> tuple[str, ...]:
    """Each container's waiting, terminated and last terminated messages that are set (entries of another shape
    are skipped), each once."""
    if not isinstance(status, dict):
        return ()
    out: list[str] = []
    for part in ("initContainerStatuses", "containerStatuses"):
        listed = status.get(part)
        for c in listed if isinstance(listed, list) else ():
            if not isinstance(c, dict):
                continue
            for state, which in (("state", "waiting"), ("state", "terminated"), ("lastState", "terminated")):
                message = _message(c.get(state), which)
                if message and message not in out:
                    out.append(message)
    return tuple(out)
