"""The kubectl krew plugin: ``kubectl-gpulabel`` as a single-file zipapp in a ``.tar.gz``, and its manifest.

``python -m tools.krew.archive --out DIR [--uri URL]`` writes ``DIR/kubectl-gpulabel-<version>.tar.gz``
(``kubectl-gpulabel``, ``LICENSE``) and ``DIR/gpulabel.yaml`` (a krew ``Plugin`` whose ``sha256`` is
the archive's). Why a zipapp: krew installs an archive and links one executable from it; gpulabel's own
code is pure Python and runs from a zip (``importlib.resources`` reads its TOML catalogues there), so
one file holds it. Its compiled dependencies (orjson, msgspec, jiter, cel-expr-python) cannot be
imported from a zip, so the plugin uses the ``python3`` on PATH with them installed
(``pip install gpulabel`` installs them, and ``kubectl-gpulabel`` too); the zipapp says so in one line
when they are missing. The archive is the same for every OS and architecture Python runs on.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import stat
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "gpulabel"
DEFAULT_URI = "https://github.com/gpulabel/gpulabel/releases/download/v{version}/kubectl-gpulabel-{version}.tar.gz"
NEEDED = ("orjson", "msgspec", "jiter", "yaml", "kubernetes", "urllib3", "prometheus_client", "cel_expr_python")

MAIN = '''"""kubectl-gpulabel: gpulabel as a kubectl plugin (a zipapp; its compiled dependencies come from python3)."""
import importlib.util
import sys

if sys.version_info < (3, 11):
    sys.exit("kubectl-gpulabel: needs Python 3.11 or newer as python3, not " + sys.version.split()[0])
missing = [m for m in {needed!r} if importlib.util.find_spec(m) is None]
if missing:
    sys.exit("kubectl-gpulabel: python3 lacks " + ", ".join(missing) + ": pip install gpulabel (or its dependencies)")
from gpulabel.cli.main import run

run()
'''


def version() -> str:
    for line in (PACKAGE / "__init__.py").read_text().splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip('"')
    raise SystemExit("no __version__ in src/gpulabel/__init__.py")


def zipapp_bytes() -> bytes:
    """``#!/usr/bin/env python3`` and a zip of the package (sources and data, no caches) with ``__main__.py``."""
    buf = io.BytesIO()
    buf.write(b"#!/usr/bin/env python3\n")
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(PACKAGE.rglob("*")):
            if (
                path.is_file()
                and "__pycache__" not in path.parts
                and path.suffix in (".py", ".toml", ".css", ".js", ".typed")
            ):
                info = zipfile.ZipInfo(str(path.relative_to(PACKAGE.parent)), date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, path.read_bytes())
        info = zipfile.ZipInfo("__main__.py", date_time=(2020, 1, 1, 0, 0, 0))
        z.writestr(info, MAIN.format(needed=NEEDED))
    return buf.getvalue()


def archive_bytes() -> bytes:
    """The ``.tar.gz`` krew downloads: ``kubectl-gpulabel`` (executable) and ``LICENSE``, reproducible."""
    import gzip

    raw = io.BytesIO()
    with tarfile.TarFile(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:  # in memory
        for name, data, mode in (
            ("kubectl-gpulabel", zipapp_bytes(), 0o755),
            ("LICENSE", (ROOT / "LICENSE").read_bytes(), 0o644),
        ):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode | stat.S_IFREG, 0
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def manifest(uri: str, sha256: str) -> str:
    """The krew ``Plugin`` (krew.googlecontainertools.github.com/v1alpha2)."""
    v = version()
    return f"""apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: gpulabel
spec:
  version: v{v}
  homepage: https://github.com/gpulabel/gpulabel
  shortDescription: Find, explain and repair the node labels GPU clusters run on
  description: |
    gpulabel checks the NFD and GPU Feature Discovery labels, the GPU Operator's deploy labels and
    operand pods, and DRA devices; explain walks the chain that makes a node's GPUs usable and says
    why an operand fails from its logs and Events. It is a Python zipapp: it runs with the python3 on
    PATH (3.11 or newer) and needs gpulabel's dependencies there (pip install gpulabel).
  caveats: |
    kubectl gpulabel runs with python3 (3.11+) and needs its dependencies: pip install gpulabel
  platforms:
    - selector:
        matchExpressions:
          - key: os
            operator: In
            values: [linux, darwin]
      uri: {uri}
      sha256: {sha256}
      bin: kubectl-gpulabel
      files:
        - from: kubectl-gpulabel
          to: .
        - from: LICENSE
          to: .
"""


def build(out: Path, uri: str | None = None) -> tuple[Path, Path]:
    """Write the archive and the manifest into ``out``; their paths."""
    v = version()
    data = archive_bytes()
    out.mkdir(parents=True, exist_ok=True)
    archive = out / f"kubectl-gpulabel-{v}.tar.gz"
    archive.write_bytes(data)  # a build output of a maintainer tool, not gpulabel's own writes
    plugin = out / "gpulabel.yaml"
    plugin.write_text(manifest(uri or DEFAULT_URI.format(version=v), hashlib.sha256(data).hexdigest()))
    return archive, plugin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--uri", help="where krew downloads the archive (default: the GitHub release)")
    a = parser.parse_args()
    for path in build(a.out, a.uri):
        print(path)


if __name__ == "__main__":
    main()
