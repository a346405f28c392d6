"""gpulabel's template subset against the real thing: Go's text/template with Sprig v3.3.0, run as NFD
v0.19 runs rule templates (tools/gotemplate, built with the local Go toolchain; cached after the first
build). Every case must give the same output, or an error on both sides (with the same message where
the message is NFD's: a missing map key, an undefined function)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gpulabel.k8s.nfd.gotemplate import Template, TemplateError, Unsupported

ROOT = Path(__file__).parents[3]
TOOL = ROOT / "tools" / "gotemplate"

ELEMS = {
    "kernel": {"config": [{"Name": "NO_HZ", "Value": "y"}, {"Name": "PREEMPT", "Value": "n"}]},
    "pci": {"device": [{"vendor": "10de", "class": "0302"}, {"vendor": "8086", "class": "0200"}]},
    "cpu": {"cpuid": [{"Name": "AVX"}, {"Name": "AVX512F"}]},
    "system": {"osrelease": [{"Name": "VERSION_ID", "Value": "22.04"}]},
}
TEMPLATES = [
    "{{ range .kernel.config }}{{ .Name }}={{ .Value }}\n{{ end }}",
    '{{ range .pci.device }}pci-{{ .vendor }}-{{ index . "class" }}=true\n{{ end }}',
    "{{ range $i, $e := .cpu.cpuid }}{{ $i }}:{{ $e.Name }} {{ end }}",
    "{{ range $e := .cpu.cpuid }}{{ $e.Name | lower }},{{ end }}",
    "{{- range .cpu.cpuid -}}\n  {{ .Name }}\n{{- end -}}",
    "{{ if eq (len .pci.device) 2 }}two{{ else if gt (len .pci.device) 2 }}many{{ else }}few{{ end }}",
    "{{ with .system.osrelease }}{{ (index . 0).Value }}{{ end }}",
    "{{ range .nope }}x{{ else }}empty{{ end }}",
    '{{ $v := "a" }}{{ $v }}{{ $v = "b" }}',
    '{{ printf "%s-%d-%v-%q" "x" 3 true "y" }}',
    '{{ and 1 0 }} {{ or 0 "" "z" }} {{ not true }}',
    '{{ ne 1 2 }} {{ lt 1 2 }} {{ le 2 2 }} {{ ge 1 2 }} {{ eq "a" "b" "a" }}',
    '{{ "A-b C" | upper }} {{ " x " | trim }} {{ trimPrefix "v" "v1.2" }} {{ trimSuffix ".0" "1.0" }}',
    '{{ replace "-" "_" "a-b-c" }} {{ contains "b" "abc" }} {{ hasPrefix "a" "abc" }} {{ hasSuffix "c" "abc" }}',
    '{{ quote "a" }} {{ squote "b" }} {{ default "d" "" }} {{ default "d" "x" }}',
    '{{ join "," (splitList "-" "a-b-c") }} {{ regexMatch "^AV" "AVX" }}',
    '{{ regexReplaceAll "([0-9]+)\\\\.([0-9]+)" "22.04" "${1}_$2" }}',
    '{{ atoi "42" }} {{ add 1 2 3 }} {{ sub 5 2 }} {{ toString 7 }} {{ repeat 3 "ab" }} {{ nospace "a b" }}',
    '{{ trimAll "-" "--x--" }} {{ empty "" }} {{ empty "a" }}',
    '{{ index .pci.device 1 "vendor" }}',
    "{{ .kernel.nope }}",
    "{{ range .pci.device }}{{ .sriov }}{{ end }}",
    '{{ env "HOME" }}',
    "{{ nosuchfunc 1 }}",
    "{{ range .kernel.config }}",
    "{{ .kernel.config.Name }}",
    "{{/* a comment */}}ok",
    '{{ 3 | printf "%d" }}',
    "{{ $n := 0 }}{{ range .cpu.cpuid }}{{ $n = .Name }}{{ end }}last={{ $n }}",
    "{{ range .pci.device }}{{ range $.cpu.cpuid }}{{ .Name }}{{ end }};{{ end }}",
    "{{ .kernel.config }}|{{ index .kernel.config 0 }}",
    "{{ range $k, $v := .kernel }}{{ $k }}:{{ len $v }} {{ end }}",
    '{{ print "a" 1 "b" }}|{{ println "x" }}|',
    'a  {{- " b " -}}  c',
    '{{ if and (eq (index .pci.device 0).vendor "10de") (ne 1 2) }}gpu{{ end }}',
    '{{ eq 1 "1" }}',
    "{{ range 3 }}{{ . }}{{ end }}",
]


@pytest.fixture(scope="module")
def go_results() -> list[dict[str, str]]:
    build = subprocess.run([str(TOOL / "build")], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr
    cases = [{"template": t, "data": ELEMS} for t in TEMPLATES]
    proc = subprocess.run(
        [str(TOOL / "bin" / "gotemplate")], input=json.dumps(cases), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    out: list[dict[str, str]] = json.loads(proc.stdout)
    return out


def _ours(text: str) -> dict[str, Any]:
    try:
        return {"output": Template(text).execute(ELEMS)}
    except Unsupported as err:
        return {"unsupported": str(err)}
    except TemplateError as err:
        return {"error": str(err)}


@pytest.mark.parametrize("i", range(len(TEMPLATES)), ids=[t[:40] for t in TEMPLATES])
def test_the_subset_agrees_with_go(go_results: list[dict[str, str]], i: int) -> None:
    go, ours = go_results[i], _ours(TEMPLATES[i])
    assert "unsupported" not in ours, ours
    if "output" in go:
        assert ours == {"output": go["output"]}
    else:
        assert "error" in ours, (go, ours)
        for nfd_message in ('map has no entry for key "', 'function "'):
            if nfd_message in go["error"]:
                assert nfd_message in ours["error"]


def test_integers_and_versions_parse_as_go_and_masterminds_semver_do() -> None:
    """strconv.Atoi and semver.NewVersion (v3.3.0, what Sprig v3.3.0 pins) on 600 drawn strings."""
    import random

    from gpulabel.k8s.nfd.expression import go_atoi, parse_version

    rng = random.Random(26)
    alphabet = "0123456789" * 3 + "+-.v x_a"
    drawn = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))) for _ in range(600)]
    fixed = ["+5", " 5", "05", "-0", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
             "5.15.0-91-generic", "v1", "1.2.3.4", "01.2", "1.2.3-01", "1.2.3+build.1", "1.2.3-rc.1+b"]  # fmt: skip
    subprocess.run([str(TOOL / "build")], check=True, timeout=600)
    proc = subprocess.run(
        [str(TOOL / "bin" / "gotemplate"), "parse"],
        input=json.dumps({"atoi": fixed + drawn, "version": fixed + drawn}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    go = json.loads(proc.stdout)

    def ours_atoi(s: str) -> str | None:
        try:
            return str(go_atoi(s))
        except ValueError:
            return None

    def ours_version(s: str) -> list[int] | None:
        try:
            return list(parse_version(s))
        except ValueError:
            return None

    strings = fixed + drawn
    assert [ours_atoi(s) for s in strings] == go["atoi"]
    assert [ours_version(s) for s in strings] == go["version"]
