package acp_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/acp"
	"github.com/aep-hook/aep-hook/harness/sinktest"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

func TestMain(m *testing.M) {
	runStub()
	os.Exit(m.Run())
}

func stubCmd(t *testing.T, dir, role string, extra ...string) []string {
	t.Helper()
	return append([]string{roleEnv + "=" + role, dirEnv + "=" + dir}, extra...)
}

// session runs the stub editor against the real tee around the stub agent
// and returns the tee's result after checking both directions byte for
// byte.
func session(t *testing.T, sink *sinktest.Sink, queue int, release func()) (acp.Result, *sinktest.Failures) {
	t.Helper()
	dir := t.TempDir()
	editorIn, teeOut, err := os.Pipe() // tee stdout → editor stdin
	if err != nil {
		t.Fatal(err)
	}
	teeIn, editorOut, err := os.Pipe() // editor stdout → tee stdin
	if err != nil {
		t.Fatal(err)
	}
	editor := exec.Command(os.Args[0])
	editor.Env = append(os.Environ(), stubCmd(t, dir, "editor")...)
	editor.Stdin, editor.Stdout, editor.Stderr = editorIn, editorOut, os.Stderr
	if err := editor.Start(); err != nil {
		t.Fatal(err)
	}
	editorIn.Close()
	editorOut.Close()

	em := &shim.Emitter{Host: "test", Policy: redact.DefaultPolicy(), Pipeline: redact.NewPipeline(redact.Options{}),
		Store: shim.NewMemStore(), Sink: sink, IDs: shim.NewIDs()}
	v := mapping.ACP()
	fails := &sinktest.Failures{}
	tee := &acp.Tee{
		Command:    []string{os.Args[0]},
		Env:        append(os.Environ(), stubCmd(t, dir, "agent", exitEnv+"=3")...),
		Stdin:      teeIn,
		Stdout:     teeOut,
		Stderr:     os.Stderr,
		Handle:     em.Handler(v),
		Errors:     fails,
		QueueLines: queue,
		Drain:      20 * time.Second,
		Token:      "T",
	}
	type out struct {
		res acp.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, err := tee.Run(context.Background())
		done <- out{r, err}
	}()
	if err := editor.Wait(); err != nil {
		t.Fatalf("stub editor: %v", err)
	}
	// The editor is done: everything it saw passed the tee already, even
	// with the sink stuck.
	same(t, dir, "editor.recv", "agent.sent")
	if release != nil {
		release()
	}
	o := <-done
	teeOut.Close()
	teeIn.Close()
	if o.err != nil {
		t.Fatalf("tee: %v", o.err)
	}
	same(t, dir, "editor.sent", "agent.recv")
	return o.res, fails
}

func same(t *testing.T, dir, a, b string) {
	t.Helper()
	x, err := os.ReadFile(filepath.Join(dir, a))
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(filepath.Join(dir, b))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Fatalf("%s (%d bytes) and %s (%d bytes) differ", a, len(x), b, len(y))
	}
	if len(x) == 0 {
		t.Fatalf("%s is empty", a)
	}
}

func TestTeeSession(t *testing.T) {
	sink := &sinktest.Sink{}
	res, fails := session(t, sink, 0, nil)
	if res.ExitCode != 3 {
		t.Errorf("exit code %d, want the agent's 3", res.ExitCode)
	}
	if !res.Drained {
		t.Error("observation not drained")
	}
	want := []string{
		// The handshake waits for the connection's first session.
		"x.acp.initialize.event", "x.acp.session.new",
		"session.started",
		"run.started",
		"tool.requested", "x.acp.tool_call.update", "tool.completed",
		"x.acp.plan.updated",
		"x.acp.usage.updated",
		"attention.requested", "attention.answered", "attention.resolved",
		"tool.requested", "tool.failed",
		"run.finished",
		"run.started",
		"tool.requested",
		"x.acp.session.cancel",
		"run.cancelled",
	}
	if got := sink.Types("sess_stub"); !reflect.DeepEqual(got, want) {
		t.Errorf("session log:\n got  %v\n want %v", got, want)
	}
	if got := sink.Types(mapping.UnknownSession); len(got) != 0 {
		t.Errorf("unknown-session log: %v", got)
	}
	st := fails.Stages()
	if st["parse"] != 2 {
		t.Errorf("parse failures %d, want 2 (the malformed and the 10 MB line): %v", st["parse"], fails.All())
	}
	if n := res.Stats.TooLong.Load(); n != 1 {
		t.Errorf("too-long lines %d, want 1", n)
	}
	if n := res.Stats.Dropped.Load(); n != 0 {
		t.Errorf("dropped %d", n)
	}
	checkLinks(t, sink.Events("sess_stub"))
}

// checkLinks verifies the joins the tee and the emitter make: the run ids
// from the prompt request ids, and the permission answer's subject.
func checkLinks(t *testing.T, evs []sinktest.Event) {
	t.Helper()
	type ev = sinktest.Event
	byType := map[string][]ev{}
	for _, e := range evs {
		byType[e.Type] = append(byType[e.Type], e)
	}
	if r := byType["run.finished"][0]; r.Run != "T:3" || r.Cause != byType["run.started"][0].ID {
		t.Errorf("run.finished run %q cause %q", r.Run, r.Cause)
	}
	if r := byType["run.cancelled"][0]; r.Run != "T:4" || r.Cause != byType["run.started"][1].ID {
		t.Errorf("run.cancelled run %q cause %q", r.Run, r.Cause)
	}
	req := byType["attention.requested"][0]
	if a := byType["attention.answered"][0]; a.Subject != req.ID || a.Cause != req.ID {
		t.Errorf("attention.answered subject %q cause %q, want %q", a.Subject, a.Cause, req.ID)
	}
	if tc := byType["tool.completed"][0]; tc.Run != "T:3" {
		t.Errorf("tool.completed run %q", tc.Run)
	}
}

// TestTeeBlockedSink runs the session with the sink stuck until the editor
// has finished: the relay must not stall, and what the queue could not hold
// is dropped and counted.
func TestTeeBlockedSink(t *testing.T) {
	gate := make(chan struct{})
	sink := &sinktest.Sink{Gate: gate}
	res, fails := session(t, sink, 2, func() { close(gate) })
	if res.ExitCode != 3 {
		t.Errorf("exit code %d", res.ExitCode)
	}
	if res.Stats.Dropped.Load() == 0 {
		t.Error("a stuck sink with a 2-line queue dropped nothing")
	}
	if fails.Stages()["queue"] != 1 {
		t.Errorf("no queue failure recorded: %v", fails.All())
	}
}

func TestTeeExitAndMissingCommand(t *testing.T) {
	tee := &acp.Tee{Command: []string{filepath.Join(t.TempDir(), "no-such-agent")}}
	res, err := tee.Run(context.Background())
	if err == nil || res.ExitCode != acp.ExitNotFound {
		t.Errorf("missing agent: code %d err %v", res.ExitCode, err)
	}
	dir := t.TempDir()
	var out bytes.Buffer
	tee = &acp.Tee{
		Command: []string{os.Args[0]},
		Env:     append(os.Environ(), stubCmd(t, dir, "echo")...),
		Stdin:   bytes.NewReader([]byte("{\"a\":1}\nno newline at end")),
		Stdout:  &out,
	}
	res, err = tee.Run(context.Background())
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("echo: code %d err %v", res.ExitCode, err)
	}
	if out.String() != "{\"a\":1}\nno newline at end" {
		t.Errorf("echo relayed %q", out.String())
	}
	if n := res.Stats.Lines.Load(); n != 4 {
		t.Errorf("lines %d, want 4 (two each way)", n)
	}
}
