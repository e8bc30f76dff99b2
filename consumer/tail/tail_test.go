package tail

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/consumer/attrmatch"
)

func evLine(agent, session, id, typ, tm, extra string) string {
	s := `{"aep":"0.1","id":"` + id + `","type":"` + typ + `","time":"2026-11-30T` + tm + `Z","source":"aep://h/agent/` + agent + `/session/` + session + `","agent":"` + agent + `","session":"` + session + `","run":"r1","seq":1`
	if extra != "" {
		s += "," + extra
	}
	return s + "}\n"
}

func writeLog(t *testing.T, root, agent, session string, lines ...string) string {
	t.Helper()
	p := filepath.Join(root, agent, session+".jsonl")
	os.MkdirAll(filepath.Dir(p), 0o700)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		f.WriteString(l)
	}
	f.Close()
	return p
}

// TestBacklog merges every agent's logs by time, filters, and shows what
// is open.
func TestBacklog(t *testing.T) {
	root := t.TempDir()
	writeLog(t, root, "codex", "s1",
		evLine("codex", "s1", "a1", "run.started", "10:00:01.000", ""),
		evLine("codex", "s1", "a3", "attention.requested", "10:00:03.000", `"subject":"shell","severity":"notice","data":{"kind":"permission","prompt":"p"}`))
	writeLog(t, root, "claude-code", "s2",
		evLine("claude-code", "s2", "b2", "tool.failed", "10:00:02.000", `"subject":"Bash\u001b[2J","data":{"tool":{"name":"Bash"},"error":{"type":"exit_1"}}`),
		evLine("claude-code", "s2", "b4", "run.finished", "10:00:04.000", ""))
	var out bytes.Buffer
	f, _ := attrmatch.ParseArgs([]string{"type=attention.*,tool.*"})
	if err := Run(context.Background(), Options{Root: root, Filter: f, Last: -1, Out: &out}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"open: 1 run(s), 1 attention request(s) pending",
		"WAITING 10:00:03.000 codex/s1 shell",
		"RUNNING 10:00:01.000 codex/s1 run r1",
		"10:00:02.000   tool.failed", `Bash\x1b[2J`, "error=exit_1",
		"10:00:03.000 ? attention.requested",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "run.finished") || strings.Contains(got, "\x1b[") {
		t.Errorf("filter or neutralisation failed:\n%s", got)
	}
	if strings.Index(got, "tool.failed") > strings.Index(got, "? attention.requested") {
		t.Errorf("not merged by time:\n%s", got)
	}
}

// syncBuf is a writer the follow loop and the test share.
type syncBuf struct {
	mu  sync.Mutex
	b   bytes.Buffer
	got chan struct{}
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Write(p)
	select {
	case s.got <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFollow prints lines appended after the start, in a new agent's
// folder too, and only whole lines.
func TestFollow(t *testing.T) {
	root := t.TempDir()
	writeLog(t, root, "codex", "s1", evLine("codex", "s1", "a1", "run.started", "10:00:01.000", ""))
	out := &syncBuf{got: make(chan struct{}, 1)}
	ready := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- Run(ctx, Options{Root: root, Last: 0, Follow: true, JSON: true, Out: out, Ready: ready})
	}()
	<-ready
	p := writeLog(t, root, "codex", "s1", evLine("codex", "s1", "a2", "tool.requested", "10:00:02.000", ""))
	waitFor(t, out, `"id":"a2"`)
	// Half a line, then the rest.
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	l := evLine("codex", "s1", "a3", "run.finished", "10:00:03.000", "")
	f.WriteString(l[:20])
	f.WriteString(l[20:])
	f.Close()
	waitFor(t, out, `"id":"a3"`)
	writeLog(t, root, "gemini-cli", "g1", evLine("gemini-cli", "g1", "c1", "session.started", "10:00:04.000", ""))
	waitFor(t, out, `"id":"c1"`)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), `"id":"a1"`) {
		t.Error("--last 0 printed the backlog")
	}
}

// waitFor waits until out holds want; the deadline only guards a hung test.
func waitFor(t *testing.T, out *syncBuf, want string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !strings.Contains(out.String(), want) {
		select {
		case <-out.got:
		case <-deadline:
			t.Fatalf("never printed %s; got:\n%s", want, out.String())
		}
	}
}

// TestTailView: long types keep the columns, run ids that start with the
// session id are told apart by what follows it, an attention follow-up
// says what it answers, and debug-level events are hidden and counted
// (shown with Debug, and always in JSON).
func TestTailView(t *testing.T) {
	root := t.TempDir()
	const sess = "ses_4f2a9c81d0e7b3aa"
	ev := func(id, typ, tm, run, extra string) string {
		return strings.Replace(evLine("opencode", sess, id, typ, tm, extra), `"run":"r1"`, `"run":"`+run+`"`, 1)
	}
	writeLog(t, root, "opencode", sess,
		ev("a1", "run.started", "10:00:01.000", sess+"-msg_0001", ""),
		ev("a2", "x.opencode.session.message_part_updated_with_a_very_long_vendor_tail", "10:00:02.000", sess+"-msg_0001", `"subject":"S2"`),
		ev("a3", "run.started", "10:00:03.000", sess+"-msg_0002", `"subject":"S3"`),
		ev("a4", "attention.requested", "10:00:04.000", sess+"-msg_0002", `"subject":"bash","data":{"kind":"permission","prompt":"p"}`),
		ev("a5", "attention.answered", "10:00:05.000", sess+"-msg_0002", `"subject":"a4","data":{"answer":{"option":"allow"}}`),
		ev("a6", "x.opencode.session.status", "10:00:06.000", sess+"-msg_0002", `"subject":"DBG","severity":"debug"`))
	var out bytes.Buffer
	if err := Run(context.Background(), Options{Root: root, Last: -1, Out: &out}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"msg_0001", "msg_0002", "x.opencode.session.mess…_a_very_long_vendor_tail",
		"<- permission bash", "(1 debug-level event(s) not shown; --debug shows them)"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "DBG") {
		t.Errorf("a debug event shown:\n%s", got)
	}
	if column(t, got, "S2") != column(t, got, "S3") {
		t.Errorf("a long type pushed the columns:\n%s", got)
	}
	for _, o := range []Options{{Debug: true}, {JSON: true}} {
		out.Reset()
		o.Root, o.Last, o.Out = root, -1, &out
		if err := Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "DBG") {
			t.Errorf("%+v hides the debug event:\n%s", o, out.String())
		}
	}
}

// column is the rune column where marker first appears in out.
func column(t *testing.T, out, marker string) int {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, marker); i >= 0 {
			return len([]rune(l[:i]))
		}
	}
	t.Fatalf("no %q in:\n%s", marker, out)
	return 0
}
