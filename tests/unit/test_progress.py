"""The progress line shows on a terminal only, after a delay, and erases itself."""

from __future__ import annotations

import io
import time

from gpulabel.cluster.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_drawn_when_stderr_is_not_a_terminal() -> None:
    out = io.StringIO()
    p = Progress("listing nodes", out, delay=0)
    p.update(10)
    p.done()
    assert out.getvalue() == ""


def test_a_terminal_sees_the_line_and_then_it_is_erased() -> None:
    out = Terminal()
    p = Progress("listing nodes", out, delay=0)
    p.update(3, 10)
    assert "listing nodes: 3/10" in out.getvalue()
    p.done()
    assert out.getvalue().endswith("\r")


def test_quick_work_draws_nothing_before_the_delay() -> None:
    out = Terminal()
    p = Progress("x", out, delay=60)
    p.update(1)
    p.done()
    assert out.getvalue() == ""


def test_updates_are_rate_limited() -> None:
    out = Terminal()
    p = Progress("x", out, delay=0)
    for i in range(1000):
        p.update(i)
    assert out.getvalue().count("\r") <= 2
    time.sleep(0.11)
    p.update(1000)
    assert "x: 1000" in out.getvalue()
