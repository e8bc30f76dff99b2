package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/acp"
	"github.com/aep-hook/aep-hook/harness/sinktest"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// The process stubs model agents whose lifetime is not their stdout's:
// a launcher that re-spawns itself as a worker sharing its stdio and
// exits (Qwen Code's `--acp`), a worker that stops at stdin EOF or never.
const (
	workerEnv = "ACP_STUB_WORKER" // polite: stop at stdin EOF; stubborn: never; silent: never, and writes once
	raiseEnv  = "ACP_STUB_SIGNAL" // the signal a dying stub ends by
)

// runProcessStub runs a process role and exits; other roles return.
func runProcessStub(role string) {
	dir := os.Getenv(dirEnv)
	switch role {
	case "launcher":
		// The worker inherits stdin and stdout (not stderr: the tee's
		// stderr here is the test's), then the launcher leaves.
		w := exec.Command(os.Args[0])
		w.Env = append(os.Environ(), roleEnv+"=worker")
		w.Stdin, w.Stdout = os.Stdin, os.Stdout
		if err := w.Start(); err != nil {
			panic(err)
		}
		os.WriteFile(filepath.Join(dir, "worker.pid"), []byte(strconv.Itoa(w.Process.Pid)), 0o600)
		fmt.Println(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"launcher"}}}}`)
		if sig := os.Getenv(raiseEnv); sig != "" {
			dieBy(sig)
		}
		os.Exit(5)
	case "worker":
		eof := make(chan struct{})
		go func() {
			io.Copy(io.Discard, os.Stdin)
			close(eof)
		}()
		out := bufio.NewWriter(os.Stdout)
		for i := 0; ; i++ {
			fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"worker %d"}}}}`+"\n", i)
			if out.Flush() != nil {
				os.Exit(0) // the reader went away
			}
			if os.Getenv(workerEnv) == "silent" {
				time.Sleep(time.Hour) // stubborn, and never writes again (killWorker ends it)
			}
			select {
			case <-eof:
				if os.Getenv(workerEnv) == "polite" {
					os.WriteFile(filepath.Join(dir, "worker.eof"), nil, 0o600)
					os.Exit(0)
				}
				eof = nil
			case <-time.After(20 * time.Millisecond):
			}
		}
	case "midturn":
		midTurn()
	case "die":
		dieBy(os.Getenv(raiseEnv))
	case "reraise":
		n, _ := strconv.Atoi(os.Getenv(raiseEnv))
		reraise(n)
		os.Exit(99)
	default:
		return
	}
	os.Exit(0)
}

// killWorker ends a worker a launcher left behind in dir, if any.
func killWorker(t *testing.T, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "worker.pid"))
	if err != nil {
		return
	}
	pid, _ := strconv.Atoi(string(b))
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// orphanTee runs the tee around a launcher whose worker is polite or
// stubborn, with the editor's stdin left open (an editor that does not
// know the agent is gone).
func orphanTee(t *testing.T, worker string, linger time.Duration, extra ...string) (acp.Result, []byte, string) {
	t.Helper()
	editorR, editorW := io.Pipe() // never closed before the tee returns
	t.Cleanup(func() { editorW.Close() })
	var out bytes.Buffer
	res, dir := orphanTeeOn(t, editorR, &out, worker, linger, extra...)
	return res, out.Bytes(), dir
}

// orphanTeeOn is orphanTee on the editor's stdin and stdout given.
func orphanTeeOn(t *testing.T, stdin io.Reader, stdout io.Writer, worker string, linger time.Duration, extra ...string) (acp.Result, string) {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() { killWorker(t, dir) })
	tee := &acp.Tee{
		Command: []string{os.Args[0]},
		Env:     append(os.Environ(), append([]string{roleEnv + "=launcher", dirEnv + "=" + dir, workerEnv + "=" + worker}, extra...)...),
		Stdin:   stdin,
		Stdout:  stdout,
		Stderr:  os.Stderr,
		Linger:  linger,
		// Drain bounds the wait for the relays after a cut; the test's
		// machine speed must not decide whether Run waits for them.
		Drain: time.Hour,
		Token: "T",
	}
	res, err := tee.Run(context.Background())
	if err != nil {
		t.Fatalf("tee: %v", err)
	}
	return res, dir
}

// TestTeeOrphanedWorker: when the direct child exits, the tee closes its
// stdin (so a worker that stops at EOF stops, and everything it wrote is
// relayed), and a worker that does not stop is cut off after Linger; the
// tee reports the launcher's status either way.
func TestTeeOrphanedWorker(t *testing.T) {
	t.Run("polite", func(t *testing.T) {
		res, out, dir := orphanTee(t, "polite", time.Minute)
		if res.ExitCode != 5 || res.Signal != nil || res.Cut {
			t.Errorf("exit %d signal %v cut %v, want 5, nil, false", res.ExitCode, res.Signal, res.Cut)
		}
		if _, err := os.Stat(filepath.Join(dir, "worker.eof")); err != nil {
			t.Errorf("the worker never saw its stdin close: %v", err)
		}
		if !bytes.Contains(out, []byte(`"launcher"`)) || !bytes.Contains(out, []byte(`"worker 0"`)) {
			t.Errorf("relayed %q", out)
		}
	})
	t.Run("stubborn", func(t *testing.T) {
		res, out, _ := orphanTee(t, "stubborn", 50*time.Millisecond)
		if res.ExitCode != 5 || !res.Cut {
			t.Errorf("exit %d cut %v, want 5, true", res.ExitCode, res.Cut)
		}
		if !bytes.Contains(out, []byte(`"launcher"`)) {
			t.Errorf("relayed %q", out)
		}
	})
	// Between real pipes the relay takes the spliced path, and a silent
	// worker never wakes its wait on the agent's stdout: the cut must
	// still end it (Drain is an hour: Run returns only once the relays
	// have).
	t.Run("silent/pipes", func(t *testing.T) {
		inR, inW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inW.Close(); inR.Close() })
		got := make(chan []byte, 1)
		go func() { b, _ := io.ReadAll(outR); got <- b }()
		res, _ := orphanTeeOn(t, inR, outW, "silent", 50*time.Millisecond)
		outW.Close()
		if res.ExitCode != 5 || !res.Cut {
			t.Errorf("exit %d cut %v, want 5, true", res.ExitCode, res.Cut)
		}
		if out := <-got; !bytes.Contains(out, []byte(`"launcher"`)) {
			t.Errorf("relayed %q", out)
		}
	})
}

func TestLingerDefaultsFitTheExitBound(t *testing.T) {
	// The bound: the tee exits within 3 s of its direct child,
	// Linger and Drain both counting from the exit.
	if acp.DefaultLinger >= 3*time.Second || acp.DefaultDrain >= 3*time.Second {
		t.Errorf("linger %v, drain %v: past the 3 s exit bound", acp.DefaultLinger, acp.DefaultDrain)
	}
}

// midTurn is an agent that names itself, opens a session, takes a prompt
// and ends without answering it: at stdin EOF (exit 0), at a signal (the
// Go default: death by it), or at once (exit 3) when ACP_STUB_WORKER says
// "exit"; when it says "answer", it answers the prompt "cancelled" at a
// signal or at stdin EOF, then exits 0 (as claude-agent-acp does).
func midTurn() {
	mode := os.Getenv(workerEnv)
	var prompt json.RawMessage
	end := func() {
		if mode == "answer" && prompt != nil {
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"cancelled"}}`+"\n", prompt)
		}
		os.Exit(0)
	}
	var sigs chan os.Signal // nil unless answering: a signal kills as by default
	if mode == "answer" {
		sigs = make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	}
	lines := make(chan string)
	go func() {
		in := bufio.NewReader(os.Stdin)
		for {
			l, err := in.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	for {
		var line string
		select {
		case <-sigs:
			end()
		case l, ok := <-lines:
			if !ok {
				end()
			}
			line = l
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal([]byte(line), &m)
		switch m.Method {
		case "initialize":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentInfo":{"name":"stub-agent","version":"9.1"}}}`+"\n", m.ID)
		case "session/new":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"sess_mid"}}`+"\n", m.ID)
		case "session/prompt":
			prompt = m.ID
			fmt.Println(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_mid","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"on it"}}}}`)
			if mode == "exit" {
				os.Exit(3)
			}
		}
	}
}

// TestTeeClosesInterruptedTurn: a prompt turn the agent never answers is
// closed by why the connection ended, in the session the handshake named,
// with the agent's name and version from initialize; doctor's error log
// says so.
func TestTeeClosesInterruptedTurn(t *testing.T) {
	for _, c := range []struct {
		name, mode string
		end        func(w io.Closer, sigs chan<- os.Signal)
		want       string
		data       map[string]any
	}{
		{"agent exits", "exit", nil, "run.failed", map[string]any{"reason": "agent_exited", "error": map[string]any{"type": "agent_exited"}}},
		{"editor stops it", "", func(_ io.Closer, sigs chan<- os.Signal) { sigs <- os.Interrupt }, "run.cancelled", map[string]any{"by": "shutdown"}},
		{"editor closes stdin", "", func(w io.Closer, _ chan<- os.Signal) { w.Close() }, "run.cancelled", map[string]any{"by": "shutdown"}},
		// The agent answers the cut turn itself: still the editor's stop,
		// never the user's cancel.
		{"agent answers the editor's signal", "answer", func(_ io.Closer, sigs chan<- os.Signal) { sigs <- os.Interrupt }, "run.cancelled", map[string]any{"by": "shutdown"}},
		{"agent answers the closed stdin", "answer", func(w io.Closer, _ chan<- os.Signal) { w.Close() }, "run.cancelled", map[string]any{"by": "shutdown"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink := &sinktest.Sink{}
			fails := &sinktest.Failures{}
			em := &shim.Emitter{Host: "test", Policy: redact.DefaultPolicy(), Pipeline: redact.NewPipeline(redact.Options{}),
				Store: shim.NewMemStore(), Sink: sink, IDs: shim.NewIDs()}
			editorR, editorW := io.Pipe()
			outR, outW := io.Pipe()
			sigs := make(chan os.Signal, 1)
			tee := &acp.Tee{
				Command: []string{os.Args[0]},
				Env:     append(os.Environ(), roleEnv+"=midturn", dirEnv+"="+t.TempDir(), workerEnv+"="+c.mode),
				Stdin:   editorR, Stdout: outW, Stderr: os.Stderr,
				Handle: em.Handler(mapping.ACP()), Errors: fails, Signals: sigs, Token: "T",
			}
			done := make(chan acp.Result, 1)
			go func() {
				r, err := tee.Run(context.Background())
				if err != nil {
					t.Error(err)
				}
				outW.Close()
				done <- r
			}()
			out := bufio.NewReader(outR)
			for _, l := range []string{
				`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`,
				`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
				`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess_mid","prompt":[{"type":"text","text":"go"}]}}`,
			} {
				io.WriteString(editorW, l+"\n")
				if _, err := out.ReadString('\n'); err != nil {
					t.Fatal(err)
				}
			}
			if c.end != nil {
				c.end(editorW, sigs)
			}
			go io.Copy(io.Discard, out)
			<-done
			editorW.Close()
			evs := sink.Events("sess_mid")
			var types []string
			for _, e := range evs {
				types = append(types, e.Type)
			}
			want := []string{"x.acp.initialize.event", "x.acp.session.new", "session.started", "run.started", c.want}
			if !reflect.DeepEqual(types, want) {
				t.Fatalf("log %v, want %v", types, want)
			}
			if cl := evs[2].Data["client"]; !reflect.DeepEqual(cl, map[string]any{"name": "stub-agent", "version": "9.1"}) {
				t.Errorf("client %v", cl)
			}
			last := evs[4]
			for k, v := range c.data {
				if !reflect.DeepEqual(last.Data[k], v) {
					t.Errorf("%s data %v, want %s %v", last.Type, last.Data, k, v)
				}
			}
			if last.Run != "T:2" || last.Cause != evs[3].ID {
				t.Errorf("%s run %q cause %q", last.Type, last.Run, last.Cause)
			}
			if want := map[bool]int{true: 0, false: 1}[c.mode == "answer"]; fails.Stages()["interrupted"] != want {
				t.Errorf("failures %v, want %d interrupted turn(s)", fails.All(), want)
			}
		})
	}
}
