// gotemplate runs Go's text/template with Sprig v3 the way NFD v0.19 runs NodeFeatureRule templates
// (missingkey=error; env, expandenv and getHostByName removed): ground truth for gpulabel's
// template subset. Reads [{"template": ..., "data": ...}] on stdin, writes [{"output"|"error": ...}].
// With the argument "parse" it reads {"atoi": [...], "version": [...]} and writes what strconv.Atoi and
// Masterminds semver's NewVersion (pre-release dropped, as NFD compares) make of each string.
package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"text/template"

	"github.com/Masterminds/semver/v3"
	"github.com/Masterminds/sprig/v3"
)

func parse() {
	var in struct {
		Atoi    []string `json:"atoi"`
		Version []string `json:"version"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	out := map[string][]any{"atoi": {}, "version": {}}
	for _, s := range in.Atoi {
		if n, err := strconv.Atoi(s); err != nil {
			out["atoi"] = append(out["atoi"], nil)
		} else {
			out["atoi"] = append(out["atoi"], strconv.Itoa(n))
		}
	}
	for _, s := range in.Version {
		v, err := semver.NewVersion(s)
		if err != nil {
			out["version"] = append(out["version"], nil)
			continue
		}
		out["version"] = append(out["version"], []uint64{v.Major(), v.Minor(), v.Patch()})
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "parse" {
		parse()
		return
	}
	var cases []struct {
		Template string         `json:"template"`
		Data     map[string]any `json:"data"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	out := []map[string]string{}
	for _, c := range cases {
		funcs := sprig.TxtFuncMap()
		for _, f := range []string{"env", "expandenv", "getHostByName"} {
			delete(funcs, f)
		}
		t, err := template.New("").Option("missingkey=error").Funcs(funcs).Parse(c.Template)
		if err != nil {
			out = append(out, map[string]string{"error": err.Error()})
			continue
		}
		var b bytes.Buffer
		if err := t.Execute(&b, c.Data); err != nil {
			out = append(out, map[string]string{"error": err.Error()})
			continue
		}
		out = append(out, map[string]string{"output": b.String()})
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
