"""``snapshot -o FILE`` in bounded memory: its peak RSS against the cluster's size, streamed and held whole.

Run: ``.venv/bin/python -m bench.snapshot_stream --nodes 2000 --nodes 20000 [--nodes 65000]``

A synthetic paged API server answers the client's LISTs in the measured process itself, but holds no
cluster: each page's objects are made when asked, from ``bench.synth``'s objects of a 200-node cluster
(node ``i`` is template node ``i % 200`` renamed, pods likewise, 2.74 pods a node as in ``synth``), so
the server's memory is one page's whatever the size, and what grows with the cluster is the client's.
Each size runs twice, each as a process of its own (``bench/measure.py``: CPU seconds and ``VmHWM``):

- ``streamed``: ``gpulabel snapshot -o FILE``, the code as it is (each page written as it arrives);
- ``whole``: what ``snapshot -o FILE`` did before (issue 50): ``capture()`` into one document, then
  ``orjson.dumps`` it and ``write_file`` the bytes.

It prints the file's size, each mode's peak RSS and the peak beyond the process's RSS before the capture
(interpreter, gpulabel's imports, the templates), and checks that both modes wrote the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

from bench.measure import measure_code

_CHILD = r"""
import copy, json, os, sys
import orjson
from bench import synth
from gpulabel.cluster.client import KubeClient

mode, nodes, out, kubeconfig = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
base = synth.objects(200)
templates = {"nodes": [o for o in base if o["kind"] == "Node"], "pods": [o for o in base if o["kind"] == "Pod"],
             "daemonsets": [o for o in base if o["kind"] == "DaemonSet"]}
counts = {"nodes": nodes, "pods": round(nodes * 2.7425), "daemonsets": 3}
for t in templates.values():
    for o in t:
        o.pop("kind", None)  # a LIST's items carry no kind: the client sets it


def made(resource, i):
    t = templates[resource]
    obj = copy.deepcopy(t[i % len(t)])
    if resource != "daemonsets":
        obj["metadata"]["name"] = f"{obj['metadata']['name']}-{i}"
        obj["metadata"]["uid"] = f"uid-{resource}-{i}"
    return obj


def serve(method, path, query=(), **_):
    if path.startswith("/apis/") and path.count("/") == 3:
        return 404, b"{}"  # no CRD or DRA group served
    resource = path.rsplit("/", 1)[-1]
    q = dict(query)
    start, limit = int(q.get("continue") or 0), int(q.get("limit") or 500)
    total = counts.get(resource, 0)
    end = min(start + limit, total)
    items = [made(resource, i) for i in range(start, end)]
    token = str(end) if end < total else ""
    return 200, orjson.dumps({"kind": "List", "metadata": {"continue": token, "resourceVersion": "7"}, "items": items})


KubeClient.request_raw = lambda self, method, path, query=(), **kw: serve(method, path, query, **kw)
import gpulabel.cli.main, gpulabel.app.snapshot, gpulabel.cluster.capture, gpulabel.cluster.files  # imported before
rss = lambda: int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS:")).split()[1])
before = rss()
if mode == "streamed":
    from gpulabel.cli.main import main
    code = main(["--kubeconfig", kubeconfig, "snapshot", "-o", out])
    assert code == 0, code
else:  # the code of run_snapshot before it streamed (issue 50)
    from gpulabel.cluster.capture import capture
    from gpulabel.cluster.files import write_file
    from gpulabel.app.snapshot import GENERATOR_MARK
    doc = capture(KubeClient(kubeconfig))
    items = doc.pop("items")
    doc = {**doc, "generator": "gpulabel", "items": items}
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    write_file(out, data, marker=GENERATOR_MARK)
print(before)
"""

_KUBECONFIG = (
    "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
    "clusters: [{name: c, cluster: {server: 'https://synthetic.invalid:6443'}}]\n"
    "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.snapshot_stream", description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, action="append", help="cluster sizes (default 2000 and 20000)")
    parser.add_argument("--modes", default="streamed,whole")
    args = parser.parse_args(argv)
    sizes = args.nodes or [2000, 20000]
    modes = [m for m in args.modes.split(",") if m]
    print("| nodes | mode | file MB | CPU s | peak RSS MB | before the capture MB (imports done) | peak beyond it MB |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        kubeconfig.write_text(_KUBECONFIG)
        for nodes in sizes:
            digests = set()
            for mode in modes:
                out = Path(tmp) / f"snap-{nodes}-{mode}.json"
                m = measure_code(_CHILD, mode, str(nodes), str(out), str(kubeconfig))
                if m.code != 0:
                    sys.stderr.write(m.stderr.decode())
                    return 1
                before = int(m.stdout.split()[-1]) / 1024
                size = out.stat().st_size / 1e6
                digests.add(hashlib.sha256(out.read_bytes()).hexdigest())
                out.unlink()
                print(
                    f"| {nodes:,} | {mode} | {size:.1f} | {m.cpu:.2f} | {m.rss_mb:.0f} | {before:.0f} "
                    f"| {m.rss_mb - before:.0f} |",
                    flush=True,
                )
            if len(digests) != 1:
                print(f"{nodes} nodes: the modes wrote different files", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
