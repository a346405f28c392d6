// Command goquote prints Go's %q of each input: one hex-encoded byte string per stdin line in,
// one JSON line {"hex": ..., "q": ...} out. Used by tests/gen_go_quote_table.py; stdlib only.
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		raw, err := hex.DecodeString(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := out.Encode(map[string]string{"hex": in.Text(), "q": fmt.Sprintf("%q", string(raw))}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
}
