"""Regenerate tests/data/go_quote_table.json: Go's own ``%q`` of tricky strings.

Run from the repository root (needs Go; the stdlib only, no downloads)::

    python tests/gen_go_quote_table.py

Inputs are hand-picked (control characters, tab, newline, DEL, invalid UTF-8,
non-printable runes, Unicode, quotes, backslash) plus seeded random strings;
each is sent to ``tests/data/goquote`` (a tiny Go program) as hex bytes and
its ``fmt.Sprintf("%q", s)`` answer recorded. tests/unit/test_gostr.py checks
gpulabel's quoter against the table without Go.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
TABLE = HERE / "data" / "go_quote_table.json"
PROGRAM = HERE / "data" / "goquote"

HAND_PICKED: list[bytes] = [
    b"",
    b"plain",
    b"with space",
    b"tab\there",
    b"\t",
    b"new\nline",
    b"\r\n",
    b"\a\b\f\v",
    b"\x00",
    b"nul\x00byte",
    b"\x01\x02\x1b\x1f",
    b"\x7f",
    b"del\x7fx",
    b'"quoted"',
    b"back\\slash",
    b'\\"',
    b"'single'",
    b"`back`",
    b"%q %s {}",
    b"\xff",
    b"\xfe\xff",
    b"\xc0\x80",  # overlong NUL
    b"\xc3",  # truncated 2-byte
    b"\xe2\x82",  # truncated 3-byte
    b"\xed\xa0\x80",  # a UTF-16 surrogate encoded as UTF-8
    b"\xf4\x90\x80\x80",  # beyond U+10FFFF
    b"ok\x80ok",
    "é".encode(),
    b"NVIDIA A100-SXM4-40GB",
    "日本語".encode(),
    "emoji 😀".encode(),
    "\u00a0".encode(),  # no-break space: not printable in Go
    "\u00ad".encode(),  # soft hyphen (Cf)
    "\u0085".encode(),  # NEL (Cc)
    "\u2028\u2029".encode(),  # line/paragraph separators
    "\u200b".encode(),  # zero-width space (Cf)
    "\u200d".encode(),  # zero-width joiner
    "\u3000".encode(),  # ideographic space (Zs)
    "\ufeff".encode(),  # BOM
    "\ufffd".encode(),  # replacement character (valid, printable)
    "\uffff".encode(),  # non-character
    "\ue000".encode(),  # private use
    "\U000f0000".encode(),  # supplementary private use
    "\U0001f600\U0001d11e".encode(),
    "\U000e0001".encode(),  # language tag (Cf)
    "\u0301".encode(),  # combining acute (Mn)
    "a\u0301".encode(),
    "\u0378".encode(),  # unassigned
    "\U0010ffff".encode(),
    "\u061c".encode(),  # Arabic letter mark (Cf)
    "\u1680".encode(),  # Ogham space mark (Zs)
    'x\x00\t\n\x7f\xff\u00a0\U0001f600"\\'.encode("utf-8", "surrogateescape"),
]

# Characters the random strings draw from: ASCII, C1 controls, Latin-1, spaces, format characters, CJK, emoji.
_POOLS = [
    [chr(c) for c in range(0x00, 0x80)],
    [chr(c) for c in range(0x80, 0x100)],
    ["\u2000", "\u2007", "\u200e", "\u202e", "\u2060", "\u2066", "\u3000", "\ufeff", "\ufff9"],
    ["日", "本", "é", "ß", "Ж", "ع", "ह", "😀", "🇩", "\u0300", "\u20ac"],
]


def random_inputs(seed: int = 21, count: int = 200) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(0, 8)):
            if rng.random() < 0.1:
                parts.append(bytes([rng.randint(0x80, 0xFF)]))  # a stray byte: invalid UTF-8
            else:
                parts.append(rng.choice(rng.choice(_POOLS)).encode())
        out.append(b"".join(parts))
    return out


def main() -> int:
    inputs = list(dict.fromkeys(HAND_PICKED + random_inputs()))
    stdin = "".join(b.hex() + "\n" for b in inputs)
    done = subprocess.run(["go", "run", "."], cwd=PROGRAM, input=stdin, capture_output=True, text=True, check=True)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["hex"] for r in rows] == [b.hex() for b in inputs]
    lines = ",\n".join(json.dumps([r["hex"], r["q"]], ensure_ascii=True) for r in rows)
    head = '{"columns": ["input as hex bytes", "Go fmt.Sprintf(\\"%q\\", s)"], "rows": [\n'
    TABLE.write_text(head + lines + "\n]}\n")
    print(f"{TABLE}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
