"""The strings the quantity differential sends to the API server: hand-picked edge cases plus seeded random ones.

tests/cluster/test_quantity_cluster.py sends each to kube-apiserver (a pod's
``resources.requests.cpu``, server dry run) and compares its answer with
gpulabel's parser; run with ``GPULABEL_WRITE_QUANTITY_TABLE=1`` it also writes
the answers to tests/data/quantity_table.json, which tests/unit/test_quantity.py
checks without a cluster.
"""

from __future__ import annotations

import random

# Where the two parsers gpulabel once had disagreed, and what the scanner makes of odd shapes.
HAND_PICKED = [
    "Gi", "+", "-", ".", "Ki", "m", "+.", "-.", "+Gi", ".Gi", "e3", "E", "n", "k", "0", "-0", "+0", "00",
    "1", "10", "100", "1000", "1024", "2048", "999999999999999999", "9223372036854775807",
    "9223372036854775808", "99999999999999999999", "1" + "0" * 30, "9" * 200,
    "0.5", ".5", "5.", "1.", "1.0", "1.00", "0.1", "0.001", "0.0001", "00.5", "-0.5", "+0.5", "1.5", "12.5",
    "100m", "1000m", "1500m", "0100m", "+100m", "-100m", "1m", "0.5m", "1n", "0.1n", "0.5n", "1.5n", "1u", "1500u",
    "1k", "1K", "1M", "1G", "1T", "1P", "1E", "1000E", "10E", "1000000E", "0.001k",
    "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei", "8Ei", "7Ei", "16Ei", "1023Ei", "1024Ki", "1048576Ki", "1025Ki",
    "+1Ki", "-1Ki", "01Ki", "8Ki", "9Ki", "0Ki", "0.5Ki", "1.5Gi", "1.Gi", "0.5Gi", "1.5Mi", "0.1Ki",
    "1023", "-1024", "-1025Ki", "512Mi", "64Gi", "16Gi", "100Gi", "1000Mi", "1.5Ei", "99Ti", "100Ti", "123Pi",
    "1e3", "1E3", "1e0", "1e1", "1e2", "1e-3", "1e-9", "1e-10", "1e+3", "1e-1", "1e18", "1e21", "1e100",
    "12.5e-3", "1.5e3", "0.5e1", "1e00003", "1e4294967296", "1e-4294967296", "e-10", ".e-10", "0e-10", "1e",
    "1ee3", "1E+", "1e+", "1e-", "1e3.5", "1Mi3", "1m3", "1k3", "1Gi1", "1Kii", "1i", "1mm", "1KM",
    "1x", "x", "0x10", "1_000", "1,5", "1 ", " 1", " 1Gi ", "\t2\n", "1 Gi", "1\u00a0", "\u00a01", "1\x1f",
    "1\u3000", "\u0661", "1/2", "--1", "+-1", "-+1", "1-", "1+", "1.2.3", "..", "1..", ".1.", "Mi", "Ei", "ki",
    "1ki", "1KI", "1mi", "1b", "1B", "1Bi", "-", "-Gi", "-m", "-1", "-1.5", "-1e3", "-0.1n", "-8Ei", "-9Ki",
    "0" * 5000 + "1", "1e0000000000000000000003", "1e9223372036854775807", "1e9223372036854775808",
    "1e-9223372036854775808", "1e" + "1" * 30,
    "", " ", "01", "001.500", "0.000000001", "0.0000000001", "123456789.123456789", "1.123456789123",
]  # fmt: skip

_SIGNS = ["", "", "", "+", "-"]
_SUFFIXES = ["", "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
_JUNK = ["e", "E", "i", "K", "x", " ", ".", "+", "-", "e+", "e-", "m", "0"]


def _digits(rng: random.Random, most: int) -> str:
    n = rng.choice([0, 1, 1, 2, 3, rng.randint(1, most)])
    return "".join(rng.choice("0123456789" if rng.random() < 0.8 else "000") for _ in range(n))


def generated(seed: int = 21, count: int = 220) -> list[str]:
    """Random quantities, mostly well-formed, a fifth with something odd in them."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        text = rng.choice(_SIGNS) + ("0" * rng.choice([0, 0, 0, 1, 2])) + _digits(rng, 22)
        if rng.random() < 0.4:
            text += "." + _digits(rng, 12)
        r = rng.random()
        if r < 0.6:
            text += rng.choice(_SUFFIXES)
        elif r < 0.8:
            text += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 30))
        if rng.random() < 0.2:
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(_JUNK) + text[at:]
        out.append(text)
    return out


def inputs() -> list[str]:
    return list(dict.fromkeys(HAND_PICKED + generated()))
