package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShipPutAside: a collector that refuses some events (400) makes
// `ship` say how many it put aside and where, and exit 3 (not "up to date"
// and 0); doctor's failure line names the adapter, says "byte" for the
// offset it gives, and counts nothing lost (the local log keeps it).
func TestShipPutAside(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		for i, l := range bytes.Split(bytes.TrimSpace(body), []byte{'\n'}) {
			if bytes.Contains(l, []byte(`"call_id":"call_1"`)) {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"error":"invalid-event","detail":"not this one","index":%d}`, i)
				return
			}
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	doctorHome(t, "claude-code")
	home := os.Getenv("AEP_HOME")
	for i := range 3 {
		if _, code := hookInProcess(t, map[string]string{"AEP_HOME": home, "AEP_HOST": "h"}, codexTool("s1", i), "codex"); code != 0 {
			t.Fatalf("hook exit %d", code)
		}
	}
	var out, errb strings.Builder
	code := run([]string{"aep-hook", "ship", "--out", srv.URL}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, func(string) string { return "" })
	aside := filepath.Join(home, "rejected")
	if code != 3 || !strings.Contains(out.String(), srv.URL+": 1 event(s) refused and put aside in "+aside) ||
		!strings.Contains(out.String(), "; everything else delivered") || strings.Contains(out.String(), "up to date") ||
		!strings.Contains(errb.String(), "1 event(s) refused and put aside") {
		t.Fatalf("ship: exit %d\n%s%s", code, out.String(), errb.String())
	}
	// A second run has nothing new to put aside: up to date, exit 0.
	out.Reset()
	if code := run([]string{"aep-hook", "ship", "--out", srv.URL}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, func(string) string { return "" }); code != 0 || !strings.Contains(out.String(), "up to date") {
		t.Fatalf("second ship: exit %d\n%s", code, out.String())
	}
	got := do(t, 1, "doctor", "--no-probe")
	for _, want := range []string{"Z codex [deliver] event at byte ", " of codex/s1.jsonl refused by " + srv.URL + " (status 400); put aside in "} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "lost") {
		t.Errorf("doctor calls a put-aside event lost:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(home, "logs", "codex", "s1.jsonl")); err != nil {
		t.Fatal(err)
	}
}
