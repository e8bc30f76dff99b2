package shim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorLogRedactsSettings records failures quoting AEP_OUT values with
// credentials in every place a URL can hold them and asserts none reaches
// the file.
func TestErrorLogRedactsSettings(t *testing.T) {
	dir := t.TempDir()
	l := &ErrorLog{Path: filepath.Join(dir, "errors.jsonl")}
	for _, msg := range []string{
		`destination "http://127.0.0.1:9/x?token=SECRETQ1": a query or fragment is not allowed`,
		`destination "http://127.0.0.1:9/x#SECRETFRAG2": a query or fragment is not allowed`,
		`destination "http://user:pa%ZZSECRET3@127.0.0.1:9/": parse "http://user:pa%ZZSECRET3@127.0.0.1:9/": invalid URL escape "%ZZ"`,
	} {
		if !l.Record(Failure{Stage: "config", Error: msg}) {
			t.Fatal("not recorded")
		}
	}
	b, err := os.ReadFile(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "SECRET") {
		t.Errorf("a secret reached the error log:\n%s", b)
	}
	if n := strings.Count(string(b), "[REDACTED:secret]"); n != 4 {
		t.Errorf("%d redactions, want 4:\n%s", n, b)
	}
}
