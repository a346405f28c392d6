"""The one retry policy (cluster/retry.py), on a fake clock: what is retried, the waits, the bounds."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from gpulabel.cluster.retry import RETRYABLE_STATUS, Retrier, RetryPolicy, retry_after_seconds


class Down(Exception):
    """Stands for urllib3's errors: no answer at all."""


@dataclass
class FakeAnswer:
    status: int
    headers: dict[str, str] = field(default_factory=dict)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.slept.append(seconds)
        self.now += seconds


@dataclass
class Server:
    """Answers from a script (the last entry repeats); records when each request was sent."""

    clock: Clock
    script: list[int | str]
    sent: list[float] = field(default_factory=list)
    retry_after: str | None = None

    def __call__(self) -> FakeAnswer:
        self.sent.append(self.clock.now)
        step = self.script[min(len(self.sent), len(self.script)) - 1]
        if step == "down":
            raise Down("connection refused")
        assert isinstance(step, int)
        headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
        return FakeAnswer(step, headers)


@pytest.fixture
def clock() -> Iterator[Clock]:
    yield Clock()


def retrier(clock: Clock, **policy: float) -> Retrier:
    return Retrier(RetryPolicy(**policy), clock=clock, sleep=clock.sleep, rand=lambda: 0.0)


@pytest.mark.parametrize("status", [200, 201, 400, 403, 404, 409, 410, 422, 501])
def test_a_final_answer_is_sent_once(clock: Clock, status: int) -> None:
    server = Server(clock, [status])
    assert retrier(clock).call(server, (Down,)).status == status
    assert (len(server.sent), clock.slept) == (1, [])


@pytest.mark.parametrize("failure", [429, 500, 502, 503, 504, "down"])
def test_429_5xx_and_an_unreachable_server_are_retried_until_an_answer(clock: Clock, failure: int | str) -> None:
    server = Server(clock, [failure, failure, 200])
    assert retrier(clock).call(server, (Down,)).status == 200
    assert clock.slept == [0.5, 1.0]


def test_the_retried_statuses_are_429_and_the_transient_5xx() -> None:
    assert frozenset({429, 500, 502, 503, 504}) == RETRYABLE_STATUS


def test_waits_double_from_half_a_second_to_ten(clock: Clock) -> None:
    server = Server(clock, [503])
    answer = retrier(clock).call(server, (Down,))
    assert answer.status == 503  # the policy gave up: the last answer is returned
    assert clock.slept == [0.5, 1, 2, 4, 8, 10, 10, 10, 10]
    assert len(server.sent) == 10


def test_a_server_that_stays_down_is_given_up_after_at_most_ten_requests_and_60_seconds(clock: Clock) -> None:
    server = Server(clock, ["down"])
    with pytest.raises(Down):
        retrier(clock).call(server, (Down,))
    assert len(server.sent) == 10
    assert server.sent[-1] - server.sent[0] <= 60


def test_the_last_wait_is_cut_so_the_final_request_goes_out_at_the_deadline(clock: Clock) -> None:
    server = Server(clock, [503])
    retrier(clock, max_attempts=100).call(server, (Down,))
    assert [t - server.sent[0] for t in server.sent] == [0, 0.5, 1.5, 3.5, 7.5, 15.5, 25.5, 35.5, 45.5, 55.5, 60]


def test_retry_after_is_honoured(clock: Clock) -> None:
    server = Server(clock, [429, 200], retry_after="3")
    assert retrier(clock).call(server, (Down,)).status == 200
    assert clock.slept == [3.0]


def test_retry_after_beyond_the_budget_gives_up_at_once(clock: Clock) -> None:
    server = Server(clock, [503, 200], retry_after="120")
    assert retrier(clock).call(server, (Down,)).status == 503
    assert (len(server.sent), clock.slept) == (1, [])


def test_retry_after_zero_is_still_bounded_by_the_attempts(clock: Clock) -> None:
    server = Server(clock, [429], retry_after="0")
    assert retrier(clock).call(server, (Down,)).status == 429
    assert len(server.sent) == 10


def test_once_the_server_was_down_a_whole_budget_further_operations_are_sent_once(clock: Clock) -> None:
    r = retrier(clock)
    server = Server(clock, ["down"])
    with pytest.raises(Down):
        r.call(server, (Down,))
    clock.now += 5  # the rest of the minute passes
    for _ in range(100):  # e.g. the other nodes of the pass
        with pytest.raises(Down):
            r.call(server, (Down,))
    assert len(server.sent) == 10 + 100


def test_the_outage_clock_starts_again_after_an_answer(clock: Clock) -> None:
    r = retrier(clock)
    with pytest.raises(Down):
        r.call(Server(clock, ["down"]), (Down,))
    assert r.call(Server(clock, [200]), (Down,)).status == 200
    server = Server(clock, ["down", "down", 200])
    assert r.call(server, (Down,)).status == 200
    assert len(server.sent) == 3


def test_an_operation_that_starts_during_an_outage_gets_only_what_is_left_of_the_budget(clock: Clock) -> None:
    r = retrier(clock, max_attempts=5)
    outage_began = clock.now
    with pytest.raises(Down):
        r.call(Server(clock, ["down"]), (Down,))  # 0, 0.5, 1.5, 3.5, 7.5
    clock.now = outage_began + 53.5
    server = Server(clock, ["down"])
    with pytest.raises(Down):
        r.call(server, (Down,))
    assert [t - outage_began for t in server.sent] == [53.5, 54, 55, 57, 60]


def test_a_budget_per_call_overrides_the_policy(clock: Clock) -> None:
    server = Server(clock, [503])
    retrier(clock).call(server, (Down,), budget=2.0)
    assert [t - server.sent[0] for t in server.sent] == [0, 0.5, 1.5, 2.0]


def test_cancel_abandons_retries_at_once(clock: Clock) -> None:
    r = retrier(clock)
    r.cancel.set()
    server = Server(clock, [503, 200])
    assert r.call(server, (Down,)).status == 503
    assert (len(server.sent), clock.slept) == (1, [])


def test_jitter_lengthens_a_wait_by_at_most_a_fifth() -> None:
    policy = RetryPolicy()
    assert [policy.delay(n) for n in range(1, 8)] == [0.5, 1, 2, 4, 8, 10, 10]
    assert policy.delay(3, rand=0.999) == pytest.approx(2 * 1.2, rel=1e-3)
    assert policy.delay(1000) == 10
    assert policy.delay(3, retry_after=7.0, rand=0.5) == 7.0


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("5", 5.0),
        (" 2 ", 2.0),
        ("0", 0.0),
        ("1.5", 1.5),
        ("-1", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
        (None, None),
    ],
    ids=["seconds", "spaces", "zero", "fraction", "negative is ignored", "an HTTP date is ignored", "absent"],
)
def test_retry_after_header(header: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(header) == seconds
