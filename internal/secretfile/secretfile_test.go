package secretfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoopbackURL(t *testing.T) {
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"ws://127.0.0.1:8787/socket", true},
		{"http://localhost:8787", true},
		{"http://LOCALHOST", true},
		{"ws://[::1]:8787/socket", true},
		{"http://127.9.9.9/", true},
		{"wss://relay.example/socket", false},
		{"http://0.0.0.0:8787", false},
		{"http://localhost.evil.example/", false},
		{"http://10.0.0.1/", false},
		{"127.0.0.1:8787", false},
		{"", false},
	} {
		if got := LoopbackURL(c.url); got != c.want {
			t.Errorf("LoopbackURL(%q) = %v", c.url, got)
		}
	}
}

// LocalUser hands the user's token to a loopback URL alone, makes no
// token file, and names an unsafe file's path without its contents.
func TestLocalUser(t *testing.T) {
	home := t.TempDir()
	if tok, err := LocalUser(home, "ws://127.0.0.1:8787/socket"); tok != "" || err != nil {
		t.Fatalf("no token file: %q %v", tok, err)
	}
	if _, err := os.Stat(filepath.Join(home, TokenFile)); err == nil {
		t.Fatal("LocalUser made a token file")
	}
	want, err := UserToken(home)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := LocalUser(home, "http://localhost:8787"); tok != want || err != nil {
		t.Errorf("loopback: %q %v", tok, err)
	}
	if tok, err := LocalUser(home, "https://relay.example"); tok != "" || err != nil {
		t.Errorf("off the machine: %q %v", tok, err)
	}
	file := filepath.Join(home, TokenFile)
	os.Chmod(file, 0o644)
	_, err = LocalUser(home, "http://127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), file) || strings.Contains(err.Error(), want) {
		t.Errorf("unsafe file: %v", err)
	}
}
