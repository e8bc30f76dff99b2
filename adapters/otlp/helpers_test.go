package otlp

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// testEnv is a receiver writing under a temporary AEP home, served on
// loopback.
type testEnv struct {
	r    *Receiver
	home string
	srv  *httptest.Server
	log  *shim.JSONL
}

func newEnv(t testing.TB, cfg Config) *testEnv {
	t.Helper()
	home := t.TempDir()
	sc := shim.Config{Home: home, Host: "test-host"}
	em := sc.NewFileEmitter(redact.DefaultPolicy())
	r, err := New(cfg, em, shim.NewErrorLog(home))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)
	return &testEnv{r: r, home: home, srv: srv, log: &shim.JSONL{Root: sc.LogRoot()}}
}

// event is the part of an emitted line the tests read.
type event struct {
	Type    string         `json:"type"`
	Agent   string         `json:"agent"`
	Session string         `json:"session"`
	Subject string         `json:"subject"`
	Seq     *int64         `json:"seq"`
	Epoch   *int64         `json:"epoch"`
	Data    map[string]any `json:"data"`
}

// events reads the session log of (agent, session).
func (e *testEnv) events(t testing.TB, agent, session string) []event {
	t.Helper()
	f, err := os.Open(e.log.Path(agent, session))
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	defer f.Close()
	var out []event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("log line %q: %v", sc.Bytes(), err)
		}
		out = append(out, ev)
	}
	return out
}

func types(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// post sends body to path with the given headers and returns the status,
// the response body and its content type.
func (e *testEnv) post(t testing.TB, path, ctype, enc string, body []byte) (int, []byte, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	if enc != "" {
		req.Header.Set("Content-Encoding", enc)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header.Get("Content-Type")
}

// rec is one log record to build: its attributes as string pairs, values
// typed by a suffix-free convention: strings only unless typed is set.
type rec map[string]any

// logsOf builds a plog.Logs with one resource of the given attributes and
// the given records.
func logsOf(res map[string]any, recs ...rec) plog.Logs {
	ld := plog.NewLogs()
	appendResource(ld, res, recs...)
	return ld
}

func appendResource(ld plog.Logs, res map[string]any, recs ...rec) {
	rl := ld.ResourceLogs().AppendEmpty()
	if err := rl.Resource().Attributes().FromRaw(res); err != nil {
		panic(err)
	}
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("test")
	for _, r := range recs {
		lr := sl.LogRecords().AppendEmpty()
		if err := lr.Attributes().FromRaw(r); err != nil {
			panic(err)
		}
	}
}

var codexRes = map[string]any{"service.name": "codex-app-server", "service.version": "0.119.0", "host.name": "dev-host-1"}
var vscodeRes = map[string]any{"service.name": "copilot-chat", "service.version": "0.37.0", "session.id": "vsc_1"}

func codexRec(conv, name string, kv ...string) rec {
	r := rec{"conversation.id": conv, "event.name": name, "originator": "Codex_CLI"}
	for i := 0; i+1 < len(kv); i += 2 {
		r[kv[i]] = kv[i+1]
	}
	return r
}

func protoBody(t testing.TB, ld plog.Logs) []byte {
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonBody(t testing.TB, ld plog.Logs) []byte {
	b, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// numbered returns n distinct codex tool_result records of one conversation.
func numbered(conv string, from, n int) []rec {
	out := make([]rec, n)
	for i := range out {
		out[i] = codexRec(conv, "codex.tool_result", "tool_name", "shell", "success", "true", "duration_ms", strconv.Itoa(from+i))
	}
	return out
}

// logDir is the log folder of agent under the env's home.
func (e *testEnv) logDir(agent string) string {
	return filepath.Dir(e.log.Path(agent, "x"))
}

var _ = mapping.Companion

func httptestServer(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
