package main

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMapOTLPExportRequest runs the README's `aep-hook map codex-otel
// --mode primary < requests.jsonl`: an OTLP/JSON ExportLogsServiceRequest
// per line becomes one moment per record, each through the chosen table.
func TestMapOTLPExportRequest(t *testing.T) {
	req := `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"codex-app-server"}}]},` +
		`"scopeLogs":[{"logRecords":[` +
		`{"attributes":[{"key":"event.name","value":{"stringValue":"codex.conversation_starts"}},{"key":"conversation.id","value":{"stringValue":"conv_1"}},{"key":"model","value":{"stringValue":"gpt-5.2-codex"}}]},` +
		`{"attributes":[{"key":"event.name","value":{"stringValue":"codex.tool_result"}},{"key":"conversation.id","value":{"stringValue":"conv_1"}},{"key":"tool_name","value":{"stringValue":"shell"}},{"key":"success","value":{"stringValue":"true"}},{"key":"duration_ms","value":{"stringValue":"412"}}]}]}]}]}`
	var out, errb bytes.Buffer
	in := strings.NewReader(req + "\n" + `{"resourceLogs":7}` + "\n")
	code := run([]string{"aep-hook", "map", "codex-otel", "--mode", "primary"}, Streams{In: in, Out: &out, Err: &errb}, func(string) string { return "" })
	if code != 1 || !strings.Contains(errb.String(), "line 2:") {
		t.Errorf("exit %d, stderr %q: want 1 and the bad line named", code, errb.String())
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev struct {
			Type, Session string
			Data          map[string]any
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		got = append(got, ev.Type+"@"+ev.Session)
	}
	// The start is recorded with the conversation's first other record, its
	// policies on the channel event beside session.started.
	if want := "session.started@conv_1 x.codex.otel.conversation_starts@conv_1 tool.completed@conv_1"; strings.Join(got, " ") != want {
		t.Errorf("events %v, want %s", got, want)
	}
}

// TestMapHostIsTheHooks: map writes the source a hook writes: the host
// from AEP_HOST, else this machine's host name, never a stand-in.
func TestMapHostIsTheHooks(t *testing.T) {
	payload := `{"hook_event_name":"SessionStart","session_id":"s1","source":"startup"}` + "\n"
	host, _ := os.Hostname()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{{nil, "aep://" + url.PathEscape(host) + "/agent/codex/session/s1"}, {map[string]string{"AEP_HOST": "laptop"}, "aep://laptop/agent/codex/session/s1"}} {
		var out, errb bytes.Buffer
		code := run([]string{"aep-hook", "map", "codex"}, Streams{In: strings.NewReader(payload), Out: &out, Err: &errb}, func(k string) string { return tc.env[k] })
		if code != 0 || !strings.Contains(out.String(), `"source":"`+tc.want+`"`) {
			t.Errorf("%v: exit %d, want source %s:\n%s%s", tc.env, code, tc.want, out.String(), errb.String())
		}
	}
	// A hook writes the same source.
	home := t.TempDir()
	r := runHook(t, hookEnv(home, t.TempDir()), []byte(payload), "codex")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	b, _ := os.ReadFile(filepath.Join(home, "logs", "codex", "s1.jsonl"))
	if !strings.Contains(string(b), `"source":"aep://test-host/agent/codex/session/s1"`) {
		t.Errorf("the hook's log: %s", b)
	}
}
