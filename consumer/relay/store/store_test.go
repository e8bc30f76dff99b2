package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAppend(t *testing.T) {
	s := &Store{Root: t.TempDir()}
	defer s.Close()
	if err := s.Append("claude-code", "s/1", []byte(`{"a":1}`), []byte(`{"a":2}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Append("claude-code", "", []byte(`{"g":1}`)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(s.Root, "claude-code", "s%2F1.jsonl"))
	if err != nil || string(b) != "{\"a\":1}\n{\"a\":2}\n" {
		t.Errorf("session file: %q %v", b, err)
	}
	if s.Path("claude-code", "") == s.Path("claude-code", "%00empty") {
		t.Error("the agent-scoped file can be taken by a session name")
	}
	fi, _ := os.Stat(s.Path("claude-code", "s/1"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	for i := 0; i < maxOpen+5; i++ {
		if err := s.Append("a", fmt.Sprint(i), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.open) > maxOpen {
		t.Errorf("%d files open", len(s.open))
	}
}

func TestTail(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) string {
		p := filepath.Join(dir, fmt.Sprint(len(content), ".jsonl"))
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	var many strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&many, "line-%04d-%s\n", i, strings.Repeat("x", 40))
	}
	for _, c := range []struct {
		name, content string
		n             int
		want          string
		more          bool
	}{
		{"empty", "", 3, "", false},
		{"fragment only", "abc", 3, "", false},
		{"fewer", "a\nb\n", 3, "a,b", false},
		{"exact", "a\nb\nc\n", 3, "a,b,c", false},
		{"more", "a\nb\nc\nd\n", 3, "b,c,d", true},
		{"fragment at end", "a\nb\nhalf", 3, "a,b", false},
		{"long line skipped", "a\n" + strings.Repeat("y", 100) + "\nc\n", 3, "a,c", false},
	} {
		lines, more, err := Tail(write(c.content), c.n, 50, 1<<20)
		var got []string
		for _, l := range lines {
			got = append(got, string(l))
		}
		if err != nil || strings.Join(got, ",") != c.want || more != c.more {
			t.Errorf("%s: %q more=%v err=%v, want %q more=%v", c.name, got, more, err, c.want, c.more)
		}
	}
	lines, more, err := Tail(write(many.String()), 1001, 100, 1<<20)
	if err != nil || len(lines) != 1001 || !more || !strings.HasPrefix(string(lines[0]), "line-3999-") || !strings.HasPrefix(string(lines[1000]), "line-4999-") {
		t.Errorf("across chunks: %d lines, more=%v, first %.10s, err %v", len(lines), more, lines[0], err)
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	f, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(dir); err == nil || !strings.Contains(err.Error(), "another relay") {
		t.Errorf("second lock: %v", err)
	}
	f.Close()
	g, err := Lock(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	g.Close()
}
