package tees

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/harness/truth"
)

// aguiScenarios are the AG-UI runs, played by js/agui-server.mjs and
// js/agui-client.mjs by name.
func aguiScenarios() []scenario {
	return []scenario{
		{Name: "tools", Description: "one run: state, a step, a message, a tool call and its result, RUN_FINISHED with a result object",
			Facts: truth.Facts{Turns: 1}},
		{Name: "interrupt", Description: "a run that ends with outcome interrupt (a tool approval), then the run resuming it with the approval",
			Facts: truth.Facts{Turns: 2, Answers: 1}},
		{Name: "cancelled", Description: "a run the agent ends with outcome cancelled",
			Facts: truth.Facts{Turns: 1, Interrupts: 1}},
		{Name: "error", Description: "a run that ends in RUN_ERROR",
			Facts: truth.Facts{Turns: 1, Failures: 1}},
		{Name: "drop", Description: "a run whose upstream connection drops mid-message",
			Facts: truth.Facts{Turns: 1, Failures: 1}},
		{Name: "abort", Description: "a run the UI aborts (HttpAgent.abortRun) mid-stream",
			Facts: truth.Facts{Turns: 1, Interrupts: 1}},
		{Name: "rerun", Description: "two runs on one thread that reuse one runId",
			Facts: truth.Facts{Turns: 2}},
	}
}

// logged is one HTTP exchange as a driver logged it: agui-client.mjs what
// the client sent and read (with the status and headers it got),
// agui-server.mjs what the server read and wrote (Chunks: the body).
type logged struct {
	Request
	Chunks []string `json:"chunks"`
	End    string   `json:"end"`
}

// recordAGUI runs one scenario: the encoder server, the tee in front of
// it, the HttpAgent client through the tee.
func (h *Harness) recordAGUI(s scenario) (Recording, error) {
	r, err := h.newRun()
	if err != nil {
		return Recording{}, err
	}
	defer r.close()
	mods := filepath.Join(h.Cache, aguiPkg.Dir, "node_modules", "@ag-ui")
	r.Setenv("AGUI_ENCODER", filepath.Join(mods, "encoder", "dist", "index.mjs"))
	r.Setenv("AGUI_CLIENT", filepath.Join(mods, "client", "dist", "index.mjs"))
	serverLog := filepath.Join(r.Dir, "server.jsonl")
	r.Setenv("AGUI_SERVER_LOG", serverLog)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, "node", filepath.Join(r.Dir, "js", "agui-server.mjs"))
	srv.Env, srv.Stderr = r.Env, h.Log
	port, err := startPrinting(srv, false)
	if err != nil {
		return Recording{}, fmt.Errorf("agui server: %w", err)
	}
	defer stop(srv)
	tee := exec.CommandContext(ctx, h.AEPHook, "agui", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:"+port)
	tee.Env = r.Env
	banner, err := startPrinting(tee, true)
	if err != nil {
		return Recording{}, fmt.Errorf("agui tee: %w", err)
	}
	defer stop(tee)
	addr := strings.Fields(strings.TrimPrefix(banner, "aep-hook agui: proxying "))[0]
	transcript := filepath.Join(r.Dir, "transcript.jsonl")
	if err := r.node(time.Minute, "agui-client.mjs", s.Name, addr, transcript); err != nil {
		return Recording{}, err
	}
	stop(tee) // the tee finishes observing on SIGTERM
	stop(srv)
	var cx []logged
	if err := readJSONLines(transcript, &cx); err != nil {
		return Recording{}, err
	}
	var sx []logged
	if err := readJSONLines(serverLog, &sx); err != nil {
		return Recording{}, err
	}
	if len(cx) != len(sx) {
		return Recording{}, fmt.Errorf("the client made %d requests, the server saw %d", len(cx), len(sx))
	}
	rec := Recording{
		Dir: filepath.Join(h.Fixtures, AGUI, "recorded", s.Name),
		Meta: Meta{Protocol: AGUI, Peer: "ag-ui-encoder-server", Package: "@ag-ui/encoder", Version: "1.0.0", Client: aguiPkg.Names[0],
			Scenario: s.Name, Description: s.Description, Facts: s.Facts},
	}
	for i, c := range cx {
		sv := sx[i]
		if problems := transparent(c, sv); len(problems) > 0 {
			return rec, fmt.Errorf("request %d was not relayed transparently: %s", i+1, strings.Join(problems, "; "))
		}
		rec.Exchanges = append(rec.Exchanges, Exchange{Request: c.Request, Sent: sv.Chunks, Dropped: sv.End == "dropped",
			Received: strings.Join(c.Chunks, ""), End: c.End})
	}
	h.checkLive(r, rec)
	return rec, nil
}

// transparent compares what the client sent and read with what the
// server read and sent.
func transparent(c, s logged) []string {
	var bad []string
	if c.Body != s.Body {
		bad = append(bad, "the request body changed")
	}
	for k, v := range c.Header {
		if got := s.Header[strings.ToLower(k)]; got != v {
			bad = append(bad, fmt.Sprintf("request header %s: sent %q, arrived %q", k, v, got))
		}
	}
	sent, got := strings.Join(s.Chunks, ""), strings.Join(c.Chunks, "")
	switch {
	case c.End == "aborted" && !strings.HasPrefix(sent, got):
		bad = append(bad, "the bytes read are not what the server sent")
	case c.End != "aborted" && sent != got:
		bad = append(bad, fmt.Sprintf("the response changed (%d bytes sent, %d read)", len(sent), len(got)))
	}
	return bad
}

// startPrinting starts cmd and returns its first line of stdout (or of
// stderr when fromErr).
func startPrinting(cmd *exec.Cmd, fromErr bool) (string, error) {
	var p io.ReadCloser
	var err error
	if fromErr {
		p, err = cmd.StderrPipe()
	} else {
		p, err = cmd.StdoutPipe()
	}
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(p).ReadString('\n')
	go io.Copy(io.Discard, p)
	if err != nil {
		return "", fmt.Errorf("%s printed nothing: %w", cmd.Path, err)
	}
	return strings.TrimSpace(line), nil
}

// stop ends a started command with SIGTERM and waits for it.
func stop(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// readJSONLines decodes a file of JSON lines into *out (a slice).
func readJSONLines[T any](path string, out *[]T) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		*out = append(*out, v)
	}
	return nil
}
