"""Compare Python CEL libraries on DRA's selector environment (docs/dra.md records the results).

Run with each candidate's interpreter (each in its own venv, so install sizes
can be measured apart):

    python bench/cel_compare.py celpy|rust|cpp [--devices N] [--exprs M]

Prints the correctness cases (what each library answers for DRA-shaped
expressions, against the answer Kubernetes gives) and the time to evaluate M
expressions on N devices naively (one evaluation per device and expression, no
caching), per evaluation and for the whole grid.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

# (expression, what Kubernetes 1.37 answers on DEVICE: True/False or "error"/"reject")
CASES: list[tuple[str, Any]] = [
    ('device.driver == "gpu.nvidia.com"', True),
    ('device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"', True),
    ('device.attributes["gpu.nvidia.com"].index > 2', True),
    ('device.attributes["gpu.nvidia.com"].index == 3.0', True),  # heterogeneous equality at run time
    ('device.attributes["gpu.nvidia.com"].nosuch == 1', "error"),  # no such key: nosuch
    ('device.attributes["other.domain"].x == 1', "error"),  # unknown domain is an empty map: no such key: x
    ('has(device.attributes["gpu.nvidia.com"].nosuch)', False),
    ('device.attributes["gpu.nvidia.com"].nosuch == 1 || true', True),  # error absorbed by ||
    ('device.attributes["gpu.nvidia.com"].?nosuch.orValue(1) == 1', True),  # optionals
    ('cel.bind(g, device.attributes["gpu.nvidia.com"], g.index == 3)', True),  # bindings
    ('device.attributes["gpu.nvidia.com"].productName.lowerAscii().contains("a100")', True),  # strings ext
    ('device.attributes["gpu.nvidia.com"].architecture.matches("^Amp")', True),
    ("[1, 2].exists(x, x == 2)", True),
    ('1 + "a" == 2', "reject"),  # type checker: no matching overload for '_+_' applied to '(int, string)'
    ("nosuch == 1", "reject"),  # undeclared reference
    ("(1 +", "reject"),  # syntax error
]


def device(rng: random.Random | None = None) -> dict[str, Any]:
    idx = 3 if rng is None else rng.randint(0, 7)
    return {
        "driver": "gpu.nvidia.com",
        "attributes": {
            "gpu.nvidia.com": {
                "type": "gpu",
                "productName": "NVIDIA A100-SXM4-80GB",
                "architecture": "Ampere",
                "index": idx,
                "uuid": f"GPU-{idx:08x}",
            }
        },
        "capacity": {},
    }


class Candidate:
    def compile(self, expr: str) -> Any: ...
    def run(self, program: Any, dev: dict[str, Any]) -> Any: ...


class CelPy(Candidate):
    def __init__(self) -> None:
        import celpy
        from celpy import json_to_cel

        self.env = celpy.Environment()
        self.celpy = celpy
        self.conv = json_to_cel

    def compile(self, expr: str) -> Any:
        return self.env.program(self.env.compile(expr))

    def run(self, program: Any, dev: dict[str, Any]) -> Any:
        return program.evaluate({"device": self.conv(dev)})


class Rust(Candidate):
    def __init__(self) -> None:
        import cel

        self.cel = cel

    def compile(self, expr: str) -> Any:
        return self.cel.compile(expr)

    def run(self, program: Any, dev: dict[str, Any]) -> Any:
        return program.execute({"device": dev})


class Cpp(Candidate):
    def __init__(self) -> None:
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

        t = cel.Type
        self.env = cel.NewEnv(
            variables={"device": t.Map(t.STRING, t.DYN)},
            extensions=[ext_bindings.ExtBindings(), ext_optional.ExtOptional(), ext_strings.ExtStrings()],
        )

    def compile(self, expr: str) -> Any:
        return self.env.compile(expr)

    def run(self, program: Any, dev: dict[str, Any]) -> Any:
        v = program.eval(data={"device": dev})
        if v.type().name() == "ERROR":
            raise RuntimeError(str(v.value()))
        return v.value()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("lib", choices=["celpy", "rust", "cpp"])
    ap.add_argument("--devices", type=int, default=10_000)
    ap.add_argument("--exprs", type=int, default=10)
    args = ap.parse_args()
    t0 = time.perf_counter()
    cand: Candidate = {"celpy": CelPy, "rust": Rust, "cpp": Cpp}[args.lib]()
    print(f"import+env: {time.perf_counter() - t0:.3f} s")
    right = 0
    for expr, want in CASES:
        try:
            prog = cand.compile(expr)
        except Exception as err:
            got: Any = "reject"
            note = " ".join(str(err).split())[:90]
        else:
            try:
                got = bool(cand.run(prog, device()))
                note = ""
            except Exception as err:
                got, note = "error", " ".join(str(err).split())[:90]
        ok = got == want
        right += ok
        print(f"{'ok  ' if ok else 'DIFF'} {expr}  k8s={want} lib={got} {note}")
    print(f"correct: {right}/{len(CASES)}")
    rng = random.Random(1)
    devs = [device(rng) for _ in range(args.devices)]
    exprs = [
        f'device.attributes["gpu.nvidia.com"].index >= {i % 8} && device.driver == "gpu.nvidia.com"'
        for i in range(args.exprs)
    ]
    progs = [cand.compile(e) for e in exprs]
    t0 = time.perf_counter()
    for p in progs:
        for d in devs:
            cand.run(p, d)
    dt = time.perf_counter() - t0
    n = len(devs) * len(progs)
    print(f"{n} evaluations: {dt:.2f} s, {dt / n * 1e6:.1f} us each; 10,000 devices x 100 claims: {dt / n * 1e6:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
