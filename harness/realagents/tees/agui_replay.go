package tees

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// upstream is the scripted AG-UI agent: it answers the recording's
// exchanges in order, checking each request arrives as the UI sent it.
type upstream struct {
	rec  Recording
	mu   sync.Mutex
	next int
	bad  []string
}

func (u *upstream) badf(format string, a ...any) {
	u.mu.Lock()
	u.bad = append(u.bad, fmt.Sprintf(format, a...))
	u.mu.Unlock()
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	i := u.next
	u.next++
	u.mu.Unlock()
	if i >= len(u.rec.Exchanges) {
		u.badf("request %d: the recording has only %d", i+1, len(u.rec.Exchanges))
		w.WriteHeader(http.StatusNotFound)
		return
	}
	x := u.rec.Exchanges[i]
	body, _ := io.ReadAll(r.Body)
	if string(body) != x.Body || r.Method != x.Method || r.URL.Path != x.Path {
		u.badf("request %d: %s %s with %d body bytes arrived, the UI sent %s %s with %d", i+1, r.Method, r.URL.Path, len(body), x.Method, x.Path, len(x.Body))
	}
	for k, v := range x.Header {
		if got := r.Header.Get(k); got != v {
			u.badf("request %d: header %s arrived %q, the UI sent %q", i+1, k, got, v)
		}
	}
	for k, v := range x.RespHeader {
		w.Header().Set(k, v)
	}
	w.WriteHeader(x.Status)
	rc := http.NewResponseController(w)
	written := 0
	for _, c := range x.Sent {
		if x.End == "aborted" && written >= len(x.Received) {
			// The agent was still streaming when the UI left: it goes on
			// until it notices.
			<-r.Context().Done()
			return
		}
		if _, err := io.WriteString(w, c); err != nil {
			return // the UI went away
		}
		written += len(c)
		rc.Flush()
	}
	if x.End == "aborted" {
		<-r.Context().Done() // the agent had more to say when the UI left
		return
	}
	if x.Dropped {
		conn, _, err := rc.Hijack()
		if err != nil {
			u.badf("request %d: cannot drop the connection: %v", i+1, err)
			return
		}
		conn.Close()
	}
}

// replayAGUI serves the scripted upstream, runs `aep-hook agui` in front
// of it and plays the UI.
func (h *Harness) replayAGUI(rec Recording, env []string) []string {
	var bad []string
	badf := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return []string{err.Error()}
	}
	up := &upstream{rec: rec}
	srv := &http.Server{Handler: up}
	go srv.Serve(ln)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // a safety net only
	defer cancel()
	tee := exec.CommandContext(ctx, h.AEPHook, "agui", "--listen", "127.0.0.1:0", "--upstream", "http://"+ln.Addr().String())
	tee.Env = env
	banner, err := startPrinting(tee, true)
	if err != nil {
		return []string{err.Error()}
	}
	addr := strings.Fields(strings.TrimPrefix(banner, "aep-hook agui: proxying "))[0]
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for i, x := range rec.Exchanges {
		if p := playUI(ctx, client, addr, x); p != "" {
			badf("exchange %d: %s", i+1, p)
		}
	}
	client.CloseIdleConnections()
	stop(tee)
	up.mu.Lock()
	bad = append(bad, up.bad...)
	up.mu.Unlock()
	return bad
}

// playUI sends one recorded request through the tee and reads the
// response as the UI did: to its end, to the failure of a dropped
// connection, or (aborted) as far as the UI read before going away.
func playUI(ctx context.Context, c *http.Client, addr string, x Exchange) string {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, x.Method, addr+x.Path, strings.NewReader(x.Body))
	if err != nil {
		return err.Error()
	}
	for k, v := range x.Header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != x.Status {
		return fmt.Sprintf("status %d, the upstream sent %d", resp.StatusCode, x.Status)
	}
	var got []byte
	switch x.End {
	case "aborted":
		got = make([]byte, len(x.Received))
		_, err = io.ReadFull(resp.Body, got)
		cancel()
	default:
		got, err = io.ReadAll(resp.Body)
		if x.End == "dropped" && err == nil {
			return "the stream ended cleanly; the upstream dropped it"
		}
		if x.End == "complete" && err != nil {
			return fmt.Sprintf("the stream failed: %v", err)
		}
	}
	if !bytes.Equal(got, []byte(x.Received)) {
		return fmt.Sprintf("the UI read %d bytes that differ from the %d the upstream sent (%q)", len(got), len(x.Received), clip(string(got)))
	}
	return ""
}
