package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestNotifyCommand: `aep-hook notify` through the binary: --test sends
// one sample to each route and says how each went (exit 1 when one
// fails); a configuration with answer buttons is taken; one others can
// read, one whose buttons have no public URL and one with no routes are
// refused with exit 2;
// no message quotes a credential.
func TestNotifyCommand(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]any
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		json.Unmarshal(b, &m)
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
	}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	defer bad.Close()

	write := func(t *testing.T, home string, mode os.FileMode, cfg map[string]any) string {
		b, _ := json.Marshal(cfg)
		p := filepath.Join(home, "notify.json")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	phone := map[string]any{"name": "phone", "type": "ntfy", "url": ok.URL + "/secret-topic-1", "token": "tk_secret_1"}
	team := map[string]any{"name": "team", "type": "webhook", "url": bad.URL + "/hooks/SECRETPATH"}
	cases := []struct {
		name   string
		mode   os.FileMode
		cfg    map[string]any
		code   int
		out    []string
		stderr string
	}{
		{"test sends to each route", 0o600, map[string]any{"routes": []any{phone}}, 0,
			[]string{"phone (ntfy to http://127.0.0.1:"}, ""},
		{"a failing route fails the test", 0o600, map[string]any{"routes": []any{phone, team}}, 1,
			[]string{"phone (ntfy", ": delivered", "team (webhook", ": failed: "}, ""},
		{"readable by others", 0o644, map[string]any{"routes": []any{phone}}, 2, nil, "notify config"},
		{"answer buttons are taken", 0o600, map[string]any{"routes": []any{phone}, "actions": map[string]any{"listen": "127.0.0.1:0", "url": "https://phone.example"}}, 0,
			[]string{"phone (ntfy", ": delivered"}, ""},
		{"answer buttons need a public URL", 0o600, map[string]any{"routes": []any{phone}, "actions": map[string]any{"listen": "127.0.0.1:0"}}, 2,
			nil, "actions: url:"},
		{"no routes", 0o600, map[string]any{"routes": []any{}}, 2, nil, "routes: none configured"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			conf := write(t, home, c.mode, c.cfg)
			r := runHook(t, hookEnv(home, t.TempDir()), nil, "notify", "--config", conf, "--test")
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, c.code, r.stdout, r.stderr)
			}
			for _, w := range c.out {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, c.stderr) {
				t.Errorf("stderr lacks %q:\n%s", c.stderr, r.stderr)
			}
			for _, secret := range []string{"secret-topic-1", "tk_secret_1", "SECRETPATH"} {
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Errorf("printed %s:\n%s%s", secret, r.stdout, r.stderr)
				}
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0]["title"] != "aep-hook: a test notification" || got[0]["topic"] != "secret-topic-1" {
		t.Fatalf("the push server got %v", got)
	}
}
