"""Driving headless Chromium with its command line only: ``--dump-dom`` and ``--screenshot``.

``--dump-dom`` prints the DOM once the page has loaded, after its scripts ran;
``--enable-logging=stderr`` puts the page's console (uncaught errors, CSP
refusals) on stderr, which :class:`Page` keeps. A fresh profile per run, and
the flags that stop Chromium from reaching the network on its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

CHROMIUM = os.environ.get("GPULABEL_CHROMIUM", "/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
    "--window-size=1400,1000",
)
_CONSOLE = re.compile(r":CONSOLE[^\]]*\] (.*)")


def find_chromium() -> tuple[str | None, str]:
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM, ""
    return None, (
        f"headless Chromium is required for the browser tests and {CHROMIUM} is missing: "
        "run scripts/install-test-deps.sh (apt-get install chromium) or set GPULABEL_CHROMIUM"
    )


@dataclass
class Page:
    dom: str
    console: list[str]  # the page's console messages, uncaught errors and CSP refusals included

    def errors(self) -> list[str]:
        """The report logs nothing: any console message is an uncaught error or a CSP refusal."""
        return list(self.console)

    def rows(self, table_id: str) -> list[list[str]]:
        """The text of each body cell of ``<table id=table_id>``, row by row."""
        parser = _Cells(table_id)
        parser.feed(self.dom)
        return parser.rows

    def titles(self, table_id: str) -> list[list[str]]:
        parser = _Cells(table_id, attr="title")
        parser.feed(self.dom)
        return parser.rows

    def text_of(self, element_id: str) -> str:
        parser = _Text(element_id)
        parser.feed(self.dom)
        return "".join(parser.text).strip()

    def count_tags(self, tag: str) -> int:
        parser = _Tags(tag)
        parser.feed(self.dom)
        return parser.count


class Chromium:
    def __init__(self, path: str) -> None:
        self.path = path

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        profile = tempfile.mkdtemp(prefix="gpulabel-chromium-")
        try:
            return subprocess.run(
                [self.path, *FLAGS, f"--user-data-dir={profile}", *args],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=True,
            )
        finally:
            shutil.rmtree(profile, ignore_errors=True)

    def dump_dom(self, url: str) -> Page:
        done = self._run("--dump-dom", url)
        return Page(done.stdout, _CONSOLE.findall(done.stderr))

    def screenshot(self, url: str, png: Path) -> Page:
        png.parent.mkdir(parents=True, exist_ok=True)
        png.unlink(missing_ok=True)
        done = self._run(f"--screenshot={png}", url)
        return Page("", _CONSOLE.findall(done.stderr))


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


class _Cells(HTMLParser):
    def __init__(self, table_id: str, attr: str = "") -> None:
        super().__init__()
        self.table_id, self.attr = table_id, attr
        self.depth = 0  # tables open inside the wanted one, plus one for it
        self.in_body = False
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and (self.depth or dict(attrs).get("id") == self.table_id):
            self.depth += 1
        elif self.depth == 1 and tag == "tbody":
            self.in_body = True
        elif self.depth == 1 and self.in_body and tag == "tr":
            self.rows.append([])
        elif self.depth == 1 and self.in_body and tag == "td":
            self.cell = []
            if self.attr:
                self.cell.append(dict(attrs).get(self.attr) or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self.depth:
            self.depth -= 1
        elif tag == "tbody":
            self.in_body = False
        elif tag == "td" and self.cell is not None:
            self.rows[-1].append("".join(self.cell))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None and not self.attr:
            self.cell.append(data)


class _Text(HTMLParser):
    def __init__(self, element_id: str) -> None:
        super().__init__()
        self.element_id = element_id
        self.stack: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.stack or dict(attrs).get("id") == self.element_id:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.stack:
            self.text.append(data)


class _Tags(HTMLParser):
    def __init__(self, tag: str) -> None:
        super().__init__()
        self.tag, self.count = tag, 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.count += tag == self.tag
