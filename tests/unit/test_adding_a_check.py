"""CONTRIBUTING.md's "Adding a check", tried: the check of tests/unit/toy_room/ is one folder (its rules and
its definition), as every check of gpulabel's is.

In process, a Registry with it added runs it, and the monitor's two evaluators agree on it over random node
events. Then the recipe itself: the folder is copied into a copy of ``src/gpulabel/checks/`` with one import and
one row added to the registry, and that tree keeps every import contract, lists the check in ``check --help``
and runs it in ``check`` on a snapshot. A planted import of another room's internals in the copied folder
breaks the rooms contract, so the recipe's "imports only the engine and the model" is held, not assumed.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.incremental import IncrementalEvaluator
from gpulabel.checks.registry import BUILTIN, run_checks
from gpulabel.model.cluster import ClusterState
from gpulabel.model.readers import node_from_json
from tests.objects import as_list, gpu_node
from tests.unit.test_architecture import LINT, ROOT
from tests.unit.toy_room.check import CHECK as PRODUCTLESS

ROOM = Path(__file__).parent / "toy_room"
WITH_TOY = BUILTIN.with_check(PRODUCTLESS)


def _nodes() -> list[dict[str, object]]:
    return [gpu_node("gpu-a"), gpu_node("gpu-b", **{"nvidia.com/gpu.product": None}), gpu_node("gpu-c")]


def test_a_registry_with_the_folder_s_check_runs_it() -> None:
    state = ClusterState.from_objects(("t", o) for o in _nodes())
    result = run_checks(state, WITH_TOY.options())
    (part,) = [p for p in result.parts if p.command == "productless"]
    assert [(f.node, f.reason, f.severity) for f in part.findings] == [("gpu-b", "no-product", "warning")]


def test_the_monitor_s_evaluators_agree_on_it() -> None:
    rng = random.Random(44)
    full, incremental = FullEvaluator(WITH_TOY.options()), IncrementalEvaluator(WITH_TOY.options())
    nodes = {n["metadata"]["name"]: n for n in _nodes()}  # type: ignore[index]
    for ev in (full, incremental):
        ev.reset("Node", [(("", k), node_from_json(v)) for k, v in nodes.items()])
    seen = set()
    for step in range(60):
        name = rng.choice(sorted(nodes))
        labels = nodes[name]["metadata"]["labels"]  # type: ignore[index]
        if "nvidia.com/gpu.product" in labels:
            del labels["nvidia.com/gpu.product"]
        else:
            labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3"
        record = node_from_json(nodes[name])
        for ev in (full, incremental):
            ev.apply("Node", ("", name), record)
        got, want = incremental.assess(1000.0 + step), full.assess(1000.0 + step)
        assert got.result == want.result, step
        seen.add(len([f for f in want.result.findings if f.check == "productless"]))
    assert len(seen) > 2  # the events moved the check's findings, so the agreement says something


def _tree_with_the_room(tmp_path: Path, planted: str = "") -> Path:
    """A copy of src/ with toy_room copied to checks/productless/ and its row added to the registry."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "gpulabel", src / "gpulabel", ignore=shutil.ignore_patterns("__pycache__"))
    room = src / "gpulabel" / "checks" / "productless"
    shutil.copytree(ROOM, room, ignore=shutil.ignore_patterns("__pycache__"))
    if planted:
        rules = room / "rules.py"
        rules.write_text(rules.read_text().replace("from __future__ import annotations\n", f"{planted}\n", 1))
    registry = src / "gpulabel" / "checks" / "registry.py"
    text = registry.read_text()
    anchor = "from gpulabel.checks.upgrade import check as upgrade\n"
    assert anchor in text and "    runtime.CHECK,\n)" in text
    text = text.replace(anchor, anchor + "from gpulabel.checks.productless import check as productless\n")
    registry.write_text(text.replace("    runtime.CHECK,\n)", "    runtime.CHECK,\n    productless.CHECK,\n)"))
    return src


def test_the_recipe_one_folder_and_its_registry_row_keeps_the_contracts_and_runs(tmp_path: Path) -> None:
    src = _tree_with_the_room(tmp_path)
    env = {"PYTHONPATH": f"{src}:{ROOT}", "PATH": "/usr/bin:/bin"}
    lint = subprocess.run([str(LINT), "--no-cache", str(ROOT / "pyproject.toml")], cwd=src, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert lint.returncode == 0 and "0 broken" in lint.stdout, lint.stdout
    snapshot = tmp_path / "nodes.json"
    snapshot.write_text(json.dumps(as_list(*_nodes())))
    run = [sys.executable, "-m", "gpulabel"]
    helped = subprocess.run([*run, "check", "--help"], env=env, capture_output=True, text=True, timeout=60)
    assert "productless: no-product" in " ".join(helped.stdout.split()), helped.stdout
    done = subprocess.run([*run, "check", "--snapshot", str(snapshot)], env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert "productless: 1 finding(s) no-product=1" in done.stdout, done.stdout + done.stderr
    # the same run without the registry row knows nothing of it: the row is what adds it
    plain = {"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([*run, "check", "--snapshot", str(snapshot)], env=plain, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert "productless" not in done.stdout


def test_the_copied_folder_reaching_into_another_room_breaks_the_rooms_contract(tmp_path: Path) -> None:
    src = _tree_with_the_room(tmp_path, planted="from gpulabel.checks.pending import specrows")
    env = {"PYTHONPATH": f"{src}:{ROOT}", "PATH": "/usr/bin:/bin"}
    lint = subprocess.run([str(LINT), "--no-cache", str(ROOT / "pyproject.toml")], cwd=src, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    out = " ".join(lint.stdout.split())
    assert lint.returncode != 0
    assert "imports gpulabel.checks.pending.specrows (not a named shared helper)" in out, lint.stdout
