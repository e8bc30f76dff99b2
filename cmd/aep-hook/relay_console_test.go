package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/consumer/relay/auth"
)

// TestConsoleLine: the sign-in URL of the first consumer token goes whole
// to a terminal, and otherwise only to a file its owner alone can read.
func TestConsoleLine(t *testing.T) {
	toks, err := auth.Parse(strings.NewReader(`{"token":"0123456789abcdef-emitter","identity":"emitter:h/a","scopes":["write:a"]}
{"token":"0123456789abcdef-alice","identity":"consumer:alice","scopes":["subscribe:*","read:*"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "console-url")
	for _, c := range []struct {
		tty  bool
		want string
	}{
		{true, "aep-hook relay: the fleet console for consumer:alice: http://127.0.0.1:1/?access_token=0123456789abcdef-alice"},
		{false, "aep-hook relay: the fleet console for consumer:alice: http://127.0.0.1:1/ (its sign-in URL is in " + file + ")"},
	} {
		if got := consoleLine("127.0.0.1:1", toks, dir, c.tty); got != c.want {
			t.Errorf("tty %v: %q, want %q", c.tty, got, c.want)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil || string(b) != "http://127.0.0.1:1/?access_token=0123456789abcdef-alice\n" {
		t.Errorf("the file holds %q (%v)", b, err)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode is %v", st.Mode())
	}
	if got := consoleLine("127.0.0.1:1", nil, dir, false); got != "aep-hook relay: the fleet console: http://127.0.0.1:1/" {
		t.Errorf("without tokens: %q", got)
	}
}
