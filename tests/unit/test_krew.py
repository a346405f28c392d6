"""The kubectl krew plugin: the archive (a zipapp of gpulabel) and a manifest of the shape krew validates.

The rules are krew's own (sigs.k8s.io/krew internal/index/validation ValidatePlugin and ValidatePlatform):
the name a lower-case word without the ``kubectl-`` prefix, a semantic version with its ``v``, a short
description, and per platform a selector, a URI, a 64-hex sha256 and a ``bin`` that one of its files puts
in place. The real install with krew is tests/cluster/test_krew_cluster.py.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import yaml
from tools.krew.archive import build

import gpulabel


def test_the_manifest_has_the_shape_krew_validates(tmp_path: Path) -> None:
    archive, plugin = build(tmp_path, "https://example.invalid/kubectl-gpulabel.tar.gz")
    doc = yaml.safe_load(plugin.read_text())
    assert doc["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2" and doc["kind"] == "Plugin"
    name = doc["metadata"]["name"]
    assert re.fullmatch(r"[a-z][a-z0-9-]*", name) and not name.startswith("kubectl-")
    spec = doc["spec"]
    assert spec["version"] == f"v{gpulabel.__version__}"
    assert re.fullmatch(r"v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?", spec["version"])
    assert spec["shortDescription"].strip() and len(spec["shortDescription"]) <= 80
    (platform,) = spec["platforms"]
    assert platform["selector"]["matchExpressions"][0]["key"] == "os"
    assert platform["uri"] == "https://example.invalid/kubectl-gpulabel.tar.gz"
    assert re.fullmatch(r"[0-9a-f]{64}", platform["sha256"])
    assert platform["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    with tarfile.open(archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
    for f in platform["files"]:
        assert f["from"] in members and f["to"] == "."
    assert platform["bin"] in members and members[platform["bin"]].mode & 0o111


def test_the_archive_is_reproducible_and_its_zipapp_runs(tmp_path: Path) -> None:
    one, _ = build(tmp_path / "a")
    two, _ = build(tmp_path / "b")
    assert one.read_bytes() == two.read_bytes()
    with tarfile.open(one) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    run = subprocess.run(
        [sys.executable, str(tmp_path / "x" / "kubectl-gpulabel"), "version", "--client"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,  # not the repository: the package comes from the zip
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"Client Version: {gpulabel.__version__}"
    assert (tmp_path / "x" / "kubectl-gpulabel").read_bytes().startswith(b"#!/usr/bin/env python3\n")
