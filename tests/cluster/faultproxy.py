"""A fault-injecting proxy in front of labcluster's API server, for reliability tests.

Clients talk plain HTTP to the proxy on 127.0.0.1 (no credentials); the proxy
forwards each request over TLS with the admin client certificate. Faults are
rules consulted per request: answer 410 to the first paged LIST continuation,
answer 503 or 429 for a while, cut a watch stream after some events, or refuse
every request (the API server is "down"). Every request is recorded.
"""

from __future__ import annotations

import base64
import http.server
import socketserver
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
import urllib3
import yaml


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    status: int
    at: float = field(default_factory=time.monotonic)


@dataclass
class Faults:
    """Mutable fault switches; tests flip them while clients run."""

    expire_continue: int = 0  # answer 410 to this many LIST continuations
    expire_watch: int = 0  # answer 410 to this many watch requests
    fail_status: int = 0  # answer this status ...
    fail_count: int = 0  # ... to this many requests (429 gets Retry-After: 0)
    outage_seconds: float = 0.0  # answer fail_status to every request for this long ...
    outage_from: str = ""  # ... from the first request of this method (e.g. "PATCH"; "": the next request)
    outage_started: float = 0.0  # monotonic time the outage began (0: not yet)
    drop_watch_after: int = 0  # cut each watch stream after this many events (0: never)
    down: bool = False  # close every connection without an answer
    recorded: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, name: str) -> bool:
        with self.lock:
            left: int = getattr(self, name)
            if left > 0:
                setattr(self, name, left - 1)
                return True
            return False

    def in_outage(self, method: str) -> bool:
        with self.lock:
            if self.outage_seconds <= 0:
                return False
            if not self.outage_started:
                if self.outage_from and method != self.outage_from:
                    return False
                self.outage_started = time.monotonic()
            return time.monotonic() < self.outage_started + self.outage_seconds


def _status(code: int, reason: str, message: str) -> bytes:
    return orjson.dumps(
        {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason, "code": code}
    )


class FaultProxy:
    def __init__(self, kubeconfig: Path) -> None:
        config = yaml.safe_load(kubeconfig.read_text())
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        self._tmp = tempfile.TemporaryDirectory(prefix="faultproxy-")
        tmp = Path(self._tmp.name)
        for name, key in (
            ("ca.crt", None),
            ("client.crt", "client-certificate-data"),
            ("client.key", "client-key-data"),
        ):
            data = cluster["certificate-authority-data"] if key is None else user[key]
            (tmp / name).write_bytes(base64.b64decode(data))
        self.upstream = cluster["server"].rstrip("/")
        self.pool = urllib3.PoolManager(
            ca_certs=str(tmp / "ca.crt"),
            cert_file=str(tmp / "client.crt"),
            key_file=str(tmp / "client.key"),
            maxsize=16,
        )
        self.faults = Faults()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                proxy.handle(self)

            do_PATCH = do_POST = do_PUT = do_DELETE = do_GET

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def kubeconfig(self, path: Path) -> Path:
        """Write a kubeconfig that points at the proxy (no credentials needed)."""
        path.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "current-context": "proxy",
                    "clusters": [{"name": "proxy", "cluster": {"server": self.url}}],
                    "users": [{"name": "proxy", "user": {"token": "unused"}}],
                    "contexts": [{"name": "proxy", "context": {"cluster": "proxy", "user": "proxy"}}],
                }
            )
        )
        return path

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._tmp.cleanup()

    def requests(self, predicate: Callable[[Recorded], bool] = lambda r: True) -> list[Recorded]:
        with self.faults.lock:
            return [r for r in self.faults.recorded if predicate(r)]

    # -- one request -------------------------------------------------------------

    def _answer(
        self, h: http.server.BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    def handle(self, h: http.server.BaseHTTPRequestHandler) -> None:
        f = self.faults
        parts = urlsplit(h.path)
        query = parse_qs(parts.query)
        watch = query.get("watch") == ["true"] or query.get("watch") == ["1"]
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else None

        def record(status: int) -> None:
            with f.lock:
                f.recorded.append(Recorded(h.command, parts.path, query, status))

        if f.down:
            record(0)
            h.close_connection = True
            h.connection.close()
            return
        if f.fail_status and (f.take("fail_count") or f.in_outage(h.command)):
            record(f.fail_status)
            extra = {"Retry-After": "0"} if f.fail_status == 429 else {}
            self._answer(h, f.fail_status, _status(f.fail_status, "Injected", "injected fault"), extra)
            return
        if "continue" in query and f.take("expire_continue"):
            record(410)
            self._answer(h, 410, _status(410, "Expired", "The provided continue parameter is too old"))
            return
        if watch and f.take("expire_watch"):
            record(410)
            self._answer(h, 410, _status(410, "Expired", "too old resource version"))
            return
        headers = {k: v for k, v in h.headers.items() if k.lower() not in ("host", "authorization", "content-length")}
        try:
            resp = self.pool.request(
                h.command,
                self.upstream + h.path,
                body=body,
                headers=headers,
                preload_content=False,
                retries=False,
                timeout=urllib3.Timeout(connect=5, read=None),
            )
        except urllib3.exceptions.HTTPError:
            record(502)
            self._answer(h, 502, _status(502, "BadGateway", "upstream unreachable"))
            return
        record(resp.status)
        if not watch:
            data = resp.read()
            resp.release_conn()
            self._answer(h, resp.status, data)
            return
        h.send_response(resp.status)
        h.send_header("Content-Type", resp.headers.get("Content-Type", "application/json"))
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        events = 0
        buffer = b""
        try:
            for chunk in resp.stream(65536):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    out = line + b"\n"
                    h.wfile.write(f"{len(out):x}\r\n".encode() + out + b"\r\n")
                    h.wfile.flush()
                    events += 1
                    if (f.drop_watch_after and events >= f.drop_watch_after) or f.down:
                        raise ConnectionAbortedError
            h.wfile.write(b"0\r\n\r\n")
        except (ConnectionAbortedError, BrokenPipeError, ConnectionResetError, urllib3.exceptions.HTTPError):
            h.close_connection = True  # the client's end, or the API server's (killed mid-watch): cut the client
        finally:
            resp.release_conn()
