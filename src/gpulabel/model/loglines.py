"""A log line as a person reads it, and which lines of a failed container's log say why it failed.

:func:`readable` is what a terminal would have shown: colour and cursor
escapes dropped, a carriage return's overwrite kept as its last text, tabs
expanded, any other control character (and the format characters that reorder
text) written as a backslash escape. :func:`shown` is that, redacted
(``model/redaction.py``): every line of evidence is matched and printed as
:func:`shown` makes it.

:func:`decisive` picks, for a failure no signature knows, the lines a support
engineer would quote: the panic or fatal line and the error lines before it,
never the frames of the stack trace that follows (Go goroutine and signal
dumps, Python tracebacks, Java frames; a C++ abort's ``terminate called``
counts as fatal); without a fatal line the last error lines (those whose
message says what failed before those that are errors by their logger's level alone: advice printed at error
level after the failure; and not those their logger marks below error level, info or warning, after one at error
level: a retry notice about the error it follows); without an error line the last lines that are not frames, an
indented line read as the continuation of the one before it (the first line of each of the last entries is shown).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpulabel.model.redaction import redact_text

__all__ = ["below_error", "decisive", "is_error", "is_fatal", "is_frame", "readable", "says_failure", "shown"]

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_FRAME = re.compile(
    r"""^(?:
        goroutine\ \d+\ \[.*\]:?$                      # Go: a goroutine's header
      | \s+\S+\.go:\d+(?:\ \+0x[0-9a-f]+)?$            # Go: file:line of a frame
      | (?:[\w.\-]+/)*[\w.\-]+\.(?:\(\*?\w+\)\.)?[\w.\-]+(?:\[[^\]]*\])?\(.*\)$  # Go: a frame's function
      | created\ by\ \S+
      | \[signal\ .*\]$
      | PC=0x[0-9a-f]+\ .*                           # Go: a signal's dump (registers, raw stack)
      | runtime:\ unknown\ pc\ .*
      | stack:\ frame=\{.*
      | [0-9a-f]{8,16}:(?:\s+[0-9a-f]{8,16})+\s*$
      | r(?:[a-z]{2}|\d{1,2})\s+0x[0-9a-f]+$
      | Traceback\ \(most\ recent\ call\ last\):$      # Python
      | \s+File\ ".*",\ line\ \d+
      | \s+at\ [\w$.<>]+\(.*\)$                        # Java
      | \s*\.\.\.\ \d+\ more$
    )""",
    re.VERBOSE,
)
_FATAL = re.compile(
    # the Go runtime's own aborts that are not panics (runtime/proc.go badmorestackg0/gsignal: fatal: morestack on ...)
    r"^(?:panic: |fatal error: |fatal: |F\d{4} \d\d:\d\d:\d\d|FATAL|Fatal[: ]|SIG[A-Z]+: "
    r"|terminate called after throwing)"
    r"|level=(?:fatal|panic)\b|\[(?:FATAL|fatal)\]|\bcritical error\b",
)
# a failure said in words: "cannot" and "could not", and their contractions as coreutils prints them (chcon's
# "can't apply partial context to unlabeled file %s", id's "can't get process context", sort's and uptime's
# "couldn't ...": src/chcon.c, id.c, sort.c, uptime.c from v8.4 to v9.5), in straight or typographic apostrophes
_ERROR = re.compile(
    r"(?i)^(?:E\d{4} \d\d:\d\d:\d\d|error\b|\w*(?:error|exception)\b:)|level=error\b|\b(?:ERROR|ERR)\b|\[error\]"
    r"|\bfailed\b|\bunable to\b|\bcannot\b|\bcould not\b|\bcan['\u2019]t\b|\bcouldn['\u2019]t\b"
)


# a level below error that a logger writes before its message: klog's I and W headers, logrus' and slog's level=info,
# level=warning (warn), debug and trace, logrus' short INFO[0000] and WARN[0000] forms. A failure said at such a level
# follows the error it is about: k8s-device-plugin v0.15.0 to v0.17.0 log klog.Errorf("Failed to start plugin: %v")
# and then klog.Infof("Failed to start one or more plugins. Retrying in 30s...") (cmd/nvidia-device-plugin/main.go),
# and the MPS control daemon klog.Errorf("Failed to start MPS daemon: %v"), then the same Infof retry notice and, on
# the next attempt, klog.Warningf("Failed to remove .ready file: %v") (cmd/mps-control-daemon/main.go)
_BELOW_ERROR = re.compile(
    r"^[IWD]\d{4} \d\d:\d\d:\d\d|\blevel=(?i:info|warn(?:ing)?|debug|trace)\b|^(?:INFO|WARN|DEBU|TRAC)\[\d+\]"
)

# the level a logger writes before its message: klog's header, logrus' level=, its short ERRO[0000] form, a bare ERROR
_LEVEL = re.compile(
    r"^[IWEF]\d{4} \d\d:\d\d:\d\d(?:\.\d+)?\s+\d+\s+[^\]]*\]\s*|\blevel=\w+\b|^[A-Z]{4}\[\d+\]\s*|^(?:ERROR|ERR)\b:?\s*"
)


def readable(text: str) -> str:
    """What a terminal shows of ``text``: no colour escapes, the last overwrite of a carriage return, tabs as
    spaces, other control and bidirectional characters as escapes (``\\x07``, ``\\u202e``)."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        parts = [p for p in text.split("\r") if p]
        text = parts[-1] if parts else ""
    if "\t" in text:
        text = text.expandtabs(4)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in text)


def _escape(c: str) -> str:
    n = ord(c)
    if n < 0x100:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def shown(text: str) -> str:
    """A line of evidence as it is matched and printed: :func:`readable`, then redacted."""
    return redact_text(readable(text))


def is_frame(line: str) -> bool:
    return _FRAME.match(line) is not None


def is_fatal(line: str) -> bool:
    return _FATAL.search(line) is not None


def is_error(line: str) -> bool:
    return is_fatal(line) or _ERROR.search(line) is not None


def says_failure(line: str) -> bool:
    """An error line whose message itself says what failed, not one that is an error by its logger's level alone
    (the device plugin's advice after its NVML error: ``E... factory.go:69] If this is a GPU node, did you ...``)."""
    return is_fatal(line) or _ERROR.search(_LEVEL.sub("", line)) is not None


def below_error(line: str) -> bool:
    """A line its logger marks as info, warning or debug: a failure it says is a notice about an error logged before
    it (a retry), not the error itself."""
    return _BELOW_ERROR.search(line) is not None


def _in_trace(lines: Sequence[str], i: int) -> bool:
    """A frame, or the source line Python prints indented under a frame's ``File "...", line N``."""
    if is_frame(lines[i]):
        return True
    return i > 0 and lines[i][:1].isspace() and lines[i - 1].lstrip().startswith('File "') and is_frame(lines[i - 1])


def decisive(lines: Sequence[str], keep: int = 3) -> list[int]:
    """The indices (ascending) of at most ``keep`` lines that say why the program stopped: the last panic or
    fatal line with the error lines before it; else the last error lines that say what failed, leaving out those
    logged below error level after one logged at error level (or at no level): a retry notice about it (else the
    last error lines); else the last lines; never a frame of a stack trace."""
    told = [i for i, line in enumerate(lines) if line.strip() and not _in_trace(lines, i)]
    fatal = [i for i in told if is_fatal(lines[i])]
    if fatal:
        last = fatal[-1]
        before = [i for i in told if i < last and is_error(lines[i])]
        return [*before[-(keep - 1) :], last] if keep > 1 else [last]
    errors = [i for i in told if is_error(lines[i])]
    failures = [i for i in errors if says_failure(lines[i])]
    # a failure said below error level after one said at error level is a notice about it (a retry), not the cause
    first = next((i for i in failures if not below_error(lines[i])), len(lines))
    said = [i for i in failures if i <= first or not below_error(lines[i])]
    return (said or errors or _entries(lines, told) or told)[-keep:]


def _entries(lines: Sequence[str], told: Sequence[int]) -> list[int]:
    """The lines that start an entry: an indented line continues the one before it (the kernel's multi-line
    messages, which dmesg and the driver installer's ``Kernel messages:`` print with the continuation indented
    under the text), so the last entries are shown by their first lines, not by the tail of the last one."""
    return [i for k, i in enumerate(told) if k == 0 or not lines[i][:1].isspace()]
