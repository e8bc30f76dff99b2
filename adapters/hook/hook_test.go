package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

type discard struct{ n int }

func (d *discard) Write(_, _ string, ls [][]byte) error { d.n += len(ls); return nil }

func memEmitter(sink shim.Sink) *shim.Emitter {
	return &shim.Emitter{Host: "h", Policy: redact.DefaultPolicy(), Pipeline: redact.NewPipeline(redact.Options{}),
		Store: shim.NewMemStore(), Sink: sink, IDs: shim.NewIDs()}
}

func failures(t *testing.T, path string) []shim.Failure {
	t.Helper()
	fs, err := shim.ReadFailures(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return fs
}

// roomy is the deadline of tests that are not about it: the default would
// end a test process descheduled for 750 ms on a loaded machine.
const roomy = time.Minute

// TestRunnerFailOpen: whatever breaks inside, the reply is the vendor's
// neutral one and the status is 0, and the failure is recorded.
func TestRunnerFailOpen(t *testing.T) {
	reply := []byte(`{"continue":true}`)
	base := mapping.Vendor{
		Name:     "t",
		Identify: func(m mapping.Moment) (string, string) { return mapping.HookField(m, "hook"), "s" },
		Map: func(mapping.Moment, *mapping.State) ([]mapping.Draft, error) {
			return []mapping.Draft{{Type: "progress.status"}}, nil
		},
		Reply: func(string) []byte { return reply },
	}
	panicky := base
	panicky.Map = func(mapping.Moment, *mapping.State) ([]mapping.Draft, error) { panic("secret content in a panic") }
	failing := base
	failing.Map = func(mapping.Moment, *mapping.State) ([]mapping.Draft, error) { return nil, errors.New("bad shape") }
	cases := []struct {
		name  string
		v     mapping.Vendor
		in    []byte
		max   int64
		stage string
		read  func([]byte) *bytes.Reader
	}{
		{name: "ok", v: base, in: []byte(`{"hook":"X"}`)},
		{name: "panic", v: panicky, in: []byte(`{"hook":"X"}`), stage: "panic"},
		{name: "map error", v: failing, in: []byte(`{"hook":"X"}`), stage: "emit"},
		{name: "not json", v: base, in: []byte(`{"hook":`), stage: "parse"},
		{name: "too large", v: base, in: []byte(`{"hook":"XXXXXXXXXXXXXXXXXXXXXXXX"}`), max: 8, stage: "read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "errors.jsonl")
			var out bytes.Buffer
			r := Runner{Vendor: c.v, Emitter: memEmitter(&discard{}), Errors: &shim.ErrorLog{Path: logPath}, MaxInput: c.max, Deadline: roomy}
			if code := r.Run("", bytes.NewReader(c.in), &out); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if !bytes.Equal(out.Bytes(), reply) {
				t.Fatalf("stdout %q, want the neutral reply", out.Bytes())
			}
			fs := failures(t, logPath)
			if c.stage == "" {
				if len(fs) != 0 {
					t.Fatalf("unexpected failures %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Stage != c.stage {
				t.Fatalf("failures %+v, want one at stage %s", fs, c.stage)
			}
			b, _ := os.ReadFile(logPath)
			if strings.Contains(string(b), "secret content") || strings.Contains(string(b), "XXXX") {
				t.Errorf("payload content in the error log: %s", b)
			}
		})
	}
}

// TestRunnerReadError: a broken stdin is recorded, the reply stays neutral.
func TestRunnerReadError(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "errors.jsonl")
	v := mapping.Vendor{Name: "t", Reply: func(string) []byte { return nil }}
	r := Runner{Vendor: v, Emitter: memEmitter(&discard{}), Errors: &shim.ErrorLog{Path: logPath}, Deadline: roomy}
	var out bytes.Buffer
	if code := r.Run("", iotest.ErrReader(errors.New("broken pipe")), &out); code != 0 || out.Len() != 0 {
		t.Fatalf("exit %d out %q", code, out.Bytes())
	}
	if fs := failures(t, logPath); len(fs) != 1 || fs[0].Stage != "read" {
		t.Fatalf("failures %+v", fs)
	}
}

// pinInputs returns every pinned vendor input as a fuzz seed, with its
// vendor index, when the pins are present.
func pinInputs(vendors []mapping.Vendor) (seeds [][]byte, idx []uint8) {
	dir, ok := pins.Dir("AEP_CONFORMANCE_DIR", "../shared/aep-spec/conformance/fixtures/mappings")
	if !ok {
		return nil, nil
	}
	for i, v := range vendors {
		cases, _, err := pins.LoadPins(dir, v.Name)
		if err != nil {
			continue
		}
		for _, c := range cases {
			for _, s := range c.Steps {
				seeds = append(seeds, s.Input)
				idx = append(idx, uint8(i))
			}
		}
	}
	return seeds, idx
}

// FuzzHookPayload drives every hook vendor's table through the emitter with
// arbitrary payloads, pinned inputs and their truncations: nothing may panic
// and every emitted line must be a JSON event.
func FuzzHookPayload(f *testing.F) {
	var vendors []mapping.Vendor
	for _, v := range mapping.Vendors() {
		if v.Transport == mapping.TransportHook {
			vendors = append(vendors, v)
		}
	}
	if len(vendors) == 0 {
		f.Skip("no hook vendors")
	}
	seeds, idx := pinInputs(vendors)
	for i, s := range seeds {
		f.Add(s, idx[i])
		f.Add(s[:len(s)/2], idx[i])
	}
	f.Add([]byte(`{"hook_event_name":"Stop","session_id":""}`), uint8(0))
	f.Add([]byte(`[]`), uint8(1))
	f.Add([]byte(`{"hook_event_name":{"x":1},"session_id":7,"tool_input":null}`), uint8(2))
	f.Fuzz(func(t *testing.T, raw []byte, which uint8) {
		v := vendors[int(which)%len(vendors)]
		sink := &checkSink{t: t}
		em := memEmitter(sink)
		m := mapping.Moment{Raw: raw, Nonce: "n1"}
		if v.HookFromArgv {
			m.Hook = "PreToolUse"
		}
		em.Handle(v, m) // errors are fine; panics and bad lines are not
		em.Handle(v, m) // and again, against the state the first left
		if v.Reply != nil {
			v.Reply(mapping.HookField(m, "hook_event_name"))
		}
	})
}

type checkSink struct{ t *testing.T }

func (c *checkSink) Write(_, _ string, ls [][]byte) error {
	for _, l := range ls {
		var e map[string]any
		if err := json.Unmarshal(l, &e); err != nil || e["aep"] != "0.1" || e["type"] == "" {
			c.t.Fatalf("emitted line is not an event: %q", l)
		}
	}
	return nil
}

// TestRunnerDeadline: when the work hangs (a stuck disk, a mapping that
// never returns), the watchdog records the overrun, writes the reply for the
// moment's name exactly once and exits 0.
func TestRunnerDeadline(t *testing.T) {
	stuck := make(chan struct{})
	v := mapping.Vendor{
		Name:     "t",
		Identify: func(m mapping.Moment) (string, string) { return mapping.HookField(m, "hook"), "s" },
		Map: func(mapping.Moment, *mapping.State) ([]mapping.Draft, error) {
			<-stuck
			return nil, nil
		},
		Reply: func(hook string) []byte { return []byte("reply:" + hook) },
	}
	logPath := filepath.Join(t.TempDir(), "errors.jsonl")
	var out bytes.Buffer
	exited := make(chan int, 1)
	r := Runner{Vendor: v, Emitter: memEmitter(&discard{}), Errors: &shim.ErrorLog{Path: logPath},
		Deadline: 20 * time.Millisecond,
		Exit:     func(code int) { exited <- code; close(stuck) }}
	if code := r.Run("", bytes.NewReader([]byte(`{"hook":"Stop"}`)), &out); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if code := <-exited; code != 0 {
		t.Fatalf("watchdog exit %d", code)
	}
	if out.String() != "reply:Stop" {
		t.Fatalf("stdout %q, want the reply for Stop once", out.String())
	}
	if fs := failures(t, logPath); len(fs) != 1 || fs[0].Stage != "deadline" || fs[0].Hook != "Stop" {
		t.Fatalf("failures %+v", fs)
	}
}
