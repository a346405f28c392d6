"""A progress line on a terminal's stderr, for work that can take more than a moment.

It draws only when stderr is a terminal, only after ``delay`` seconds (quick
runs show nothing), at most ten times a second, and erases itself when done.
Piped or redirected output never sees it.
"""

from __future__ import annotations

import sys
import time
from typing import IO

__all__ = ["Progress"]


class Progress:
    def __init__(self, what: str, stream: IO[str] | None = None, delay: float = 1.0) -> None:
        self.what = what
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.delay = delay
        self.drawn_at = 0.0
        self.width = 0

    def update(self, done: int, total: int | None = None) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < self.delay or now - self.drawn_at < 0.1:
            return
        self.drawn_at = now
        text = f"{self.what}: {done}" + (f"/{total}" if total else "") + f" ({now - self.started:.0f}s)"
        self.width = max(self.width, len(text))
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()

    def done(self) -> None:
        if self.enabled and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0
