package shim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSafeNameStaysInside(t *testing.T) {
	ids := []string{
		"../..", "..", ".", "/", "a/b", `a\b`, "a\x00b", "\x00", strings.Repeat("x", 4096),
		strings.Repeat("é", 2000), "CON", "nul", "com1.txt", "s_8f2c", "S_8F2C", ".hidden", "%2e%2e",
		"01JX9YB3P4T9", "ec33ebf9-0cba-4100-8142-c61503f6c587", " ", "a b", "~", "",
	}
	root := t.TempDir()
	seen := map[string]string{}
	for _, id := range ids {
		n := SafeName(id)
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `/\`+"\x00") || strings.HasPrefix(n, ".") {
			t.Errorf("SafeName(%q) = %q: not one safe component", id, n)
		}
		if len(n) > maxName+20 {
			t.Errorf("SafeName(%q) is %d bytes", id, len(n))
		}
		if prev, dup := seen[strings.ToLower(n)]; dup {
			t.Errorf("ids %q and %q share file name %q (case-folded)", prev, id, n)
		}
		seen[strings.ToLower(n)] = id
		p := filepath.Join(root, n+".jsonl")
		if rel, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("SafeName(%q) escapes the root: %q", id, p)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Errorf("SafeName(%q) = %q cannot be created: %v", id, n, err)
		}
	}
}

func TestSafeNameDistinct(t *testing.T) {
	long := strings.Repeat("a", 300)
	pairs := [][2]string{{"a/b", "a%2Fb"}, {long + "1", long + "2"}, {"Ab", "ab"}, {"a.b", "a%2Eb"}}
	for _, p := range pairs {
		if SafeName(p[0]) == SafeName(p[1]) {
			t.Errorf("%q and %q collide as %q", p[0], p[1], SafeName(p[0]))
		}
	}
}

func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"../..", "a/b", "\x00", "CON", "Ab"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		n := SafeName(id)
		if n == "" || strings.ContainsAny(n, `/\`+"\x00") || strings.HasPrefix(n, ".") || len(n) > maxName+20 {
			t.Fatalf("SafeName(%q) = %q", id, n)
		}
	})
}
