"""The one retry policy: what is retried, how long to wait, when to give up.

Every request gpulabel sends goes through :meth:`Retrier.call`. An answer of
429 or 5xx (500, 502, 503, 504) and a request that never got an answer (refused,
reset or dropped connection, timeout) are retried; every other answer is
final. Waits grow from ``first_delay`` doubling to ``max_delay`` (plus up to
``jitter`` of random lengthening), or are what the server's ``Retry-After``
asks for. An operation gives up after ``max_attempts`` requests or when its
time budget is spent, whichever comes first; the last wait is cut short so
the final request goes out exactly at the deadline.

The budget counts from the start of the operation or from the start of the
current outage, whichever is earlier: the retrier remembers when the server
stopped answering (shared by every operation of one client, across threads),
so once it has been unavailable for a whole budget, each further operation
is sent once and not retried. A pass over a thousand nodes therefore waits at
most one budget for a server that is down, not one budget per node.

A small module of our own rather than tenacity or stamina: both would run the
loop, but the decisions here (which answers are retryable, ``Retry-After``, a
deadline shared by the operations of an outage, the last wait cut to the
deadline) would be callbacks of ours either way, and stamina's ``timeout``
is checked after a wait, so with ``timeout=60`` an always-failing call ended
after 60-71 s and a ``Retry-After`` beyond the budget was slept in full
(measured in docs/decisions.md, "Retries").
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

__all__ = ["RETRYABLE_STATUS", "Answer", "Retrier", "RetryPolicy", "retry_after_seconds"]

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


class _Headers(Protocol):
    def get(self, key: str, default: None = None, /) -> str | None: ...


class Answer(Protocol):
    """What a request returns: an HTTP status and headers (urllib3's response fits)."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> _Headers: ...


A = TypeVar("A", bound=Answer)


@dataclass(frozen=True)
class RetryPolicy:
    """How hard one operation tries. The defaults are what docs/sync.md documents."""

    budget: float = 60.0  # seconds of retrying per operation (and per outage)
    max_attempts: int = 10  # requests per operation, the first one included
    first_delay: float = 0.5
    max_delay: float = 10.0
    jitter: float = 0.2  # each computed wait is lengthened by up to this fraction

    def delay(self, attempt: int, retry_after: float | None = None, rand: float = 0.0) -> float:
        """The wait after failed request number ``attempt`` (1-based); ``rand`` in [0, 1)."""
        if retry_after is not None:
            return retry_after
        base = min(self.max_delay, self.first_delay * 2.0 ** min(attempt - 1, 32))
        return base * (1 + self.jitter * rand)

    def with_budget(self, budget: float) -> RetryPolicy:
        return RetryPolicy(budget, self.max_attempts, self.first_delay, self.max_delay, self.jitter)


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` in seconds (the API server sends a number); a date or junk is ignored."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


@dataclass
class Retrier:
    """Runs operations under one :class:`RetryPolicy` and one outage clock.

    ``clock``, ``sleep`` and ``rand`` are injectable for tests. Setting
    :attr:`cancel` abandons retries at once (a sleeping retry wakes up and
    returns what it last got): a controller that lost its Lease must not
    keep writing.
    """

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    clock: Callable[[], float] = time.monotonic
    rand: Callable[[], float] = random.random
    cancel: threading.Event = field(default_factory=threading.Event)
    sleep: Callable[[float], object] | None = None  # default: wait on cancel
    unavailable_since: float | None = None  # when the current outage began
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _failed(self, now: float) -> float:
        with self._lock:
            if self.unavailable_since is None:
                self.unavailable_since = now
            return self.unavailable_since

    def _answered(self) -> None:
        with self._lock:
            self.unavailable_since = None

    def call(
        self,
        send: Callable[[], A],
        unreachable: tuple[type[BaseException], ...],
        budget: float | None = None,
    ) -> A:
        """``send()`` until its answer is final or the policy gives up.

        Returns the last answer (which may be a retryable status, when the
        policy gave up); if the last try raised one of ``unreachable``, that
        exception is raised. ``budget`` overrides the policy's for this call.
        """
        policy = self.policy if budget is None else self.policy.with_budget(budget)
        started = self.clock()
        attempt = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            failure: BaseException | None = None
            try:
                answer = send()
            except unreachable as err:
                failure = err
            else:
                if answer.status not in RETRYABLE_STATUS:
                    self._answered()
                    return answer
                retry_after = retry_after_seconds(answer.headers.get("Retry-After"))
            now = self.clock()
            deadline = min(started, self._failed(now)) + policy.budget
            wait = policy.delay(attempt, retry_after, self.rand())
            give_up = (
                attempt >= policy.max_attempts
                or now >= deadline
                or (retry_after is not None and now + retry_after > deadline)
                or self.cancel.is_set()
            )
            if not give_up:
                (self.sleep or self.cancel.wait)(min(wait, deadline - now))
                give_up = self.cancel.is_set()
            if give_up:
                if failure is not None:
                    raise failure
                return answer
