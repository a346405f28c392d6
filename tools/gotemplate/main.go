// gotemplate runs Go's text/template with Sprig v3 the way NFD v0.19 runs NodeFeatureRule templates
// (missingkey=error; env, expandenv and getHostByName removed): ground truth for gpulabel's
// template subset. Reads [{"template": ..., "data": ...}] on stdin, writes [{"output"|"error": ...}].
package main

import (
	"bytes"
	"encoding/json"
	"os"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

func main() {
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
