"""A progress line on stderr, for work that can take more than a moment.

It draws only when stderr is a terminal, only after ``delay`` seconds (quick
runs show nothing), at most ten times a second, and erases itself when done.
Piped or redirected output never sees it, unless it is asked for (``force``,
``snapshot --progress``): then each line is a line of its own, at most one a
second plus the ones marked ``final``, and nothing is erased.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO

__all__ = ["Progress"]


class Progress:
    """``clock``: the monotonic time the delay and the rate are measured on."""

    def __init__(
        self,
        what: str,
        stream: IO[str] | None = None,
        delay: float = 1.0,
        force: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what = what
        self.clock = clock
        self.stream = stream if stream is not None else sys.stderr
        terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = terminal or force
        self.lines = force and not terminal  # not a terminal: whole lines, none redrawn
        self.started = clock()
        self.delay = delay
        self.drawn_at = 0.0
        self.width = 0

    def update(self, done: int, total: int | None = None) -> None:
        self.show(f"{done}" + (f"/{total}" if total else ""))

    def show(self, text: str, final: bool = False) -> None:
        """Draw ``<what>: <text> (<seconds>s)``; ``final`` (a step's last state) is drawn whatever the rate."""
        if not self.enabled:
            return
        now = self.clock()
        if now - self.started < self.delay or (not final and now - self.drawn_at < (1.0 if self.lines else 0.1)):
            return
        self.drawn_at = now
        line = f"{self.what}: {text} ({now - self.started:.0f}s)"
        if self.lines:
            self.stream.write(line + "\n")
        else:
            self.width = max(self.width, len(line))
            self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()

    def done(self) -> None:
        if self.enabled and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0
