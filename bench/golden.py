"""Golden outputs: what the read-only commands print for a snapshot, recorded once and compared after a change.

    python -m bench.golden record DIR FILE...    # write DIR/<file>.<command> for each FILE
    python -m bench.golden compare DIR FILE...   # run again, byte for byte against DIR; exit 1 on a difference

Each command runs in its own process (``python -m gpulabel``), as a user runs
it; the exit code is recorded with the output. Label ages are measured at a
fixed time (``--at``) so that the recording does not go stale; the report's
"generated" time is masked when comparing.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from pathlib import Path

AT = "2026-12-01T00:00:00Z"

# name -> argv before "--snapshot FILE" ("{F}" is the file itself, for diff)
COMMANDS: dict[str, tuple[str, ...]] = {
    "check.json": ("check", "-o", "json", "--at", AT),
    "audit.json": ("audit", "-o", "json"),
    "pending.json": ("pending", "-o", "json", "--at", AT),
    "report.html": ("report", "--html", "-", "--at", AT),
    "diff.txt": ("diff", "{F}", "{F}"),
    "diff.json": ("diff", "{F}", "{F}", "-o", "json"),
}


def run(command: str, path: str) -> bytes:
    """What ``command`` prints for the snapshot ``path``: its exit code, then stdout and stderr."""
    argv = [a.replace("{F}", path) for a in COMMANDS[command]]
    if "{F}" not in COMMANDS[command]:
        argv += ["--snapshot", path]
    done = subprocess.run([sys.executable, "-m", "gpulabel", *argv], capture_output=True, check=False)
    return b"exit %d\n--- stdout\n%s--- stderr\n%s" % (done.returncode, done.stdout, done.stderr)


_GENERATED = re.compile(rb"(generated\W{1,3})\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ")


def normalize(output: bytes) -> bytes:
    """The output without the one thing that changes from run to run: the report's "generated" time."""
    return _GENERATED.sub(rb"\1<time>", output)


def golden_name(path: str, command: str) -> str:
    return f"{Path(path).name}.{command}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.golden", description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=("record", "compare"))
    parser.add_argument("dir")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--only", action="append", choices=sorted(COMMANDS), help="these commands only")
    args = parser.parse_args(argv)
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    differ = 0
    for path in args.files:
        for command in args.only or COMMANDS:
            got = run(command, path)
            target = out / golden_name(path, command)
            digest = hashlib.sha256(got).hexdigest()[:12]
            if args.mode == "record":
                target.write_bytes(got)
                print(f"recorded {target} ({len(got)} bytes, sha256 {digest})")
            elif normalize(target.read_bytes()) == normalize(got):
                print(f"same     {target} ({len(got)} bytes, sha256 {digest})")
            else:
                differ += 1
                target.with_suffix(target.suffix + ".new").write_bytes(got)
                print(f"DIFFERS  {target}: the new output is in {target}.new")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
