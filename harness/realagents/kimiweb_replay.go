package realagents

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"
)

// replayKimiWeb serves a recorded kimi web session to a real `aep-hook
// follow kimi-web` (bin, env): a stand-in server answers the bridge's REST
// requests with the recorded answers and plays each recorded WebSocket
// connection back in order, sending the server's frames and waiting for the
// bridge's own (hello, subscribes with their cursors, pongs) where the
// recording has them, closing a connection where the server's side ended
// it. Once every connection is played the bridge is stopped. It returns the
// problems seen (a frame the bridge did not send, or sent unasked).
//
// A recording answered over control (its scenario has Control) replays
// with a fresh relay and the bridge's --control, and the harness's sender
// answers again with the recorded answers; the stand-in server then holds
// back the frames the recording has after each of the bridge's own calls
// to it (a decision, an answer, a dismissal, an abort) until the bridge
// makes that call, as the real server reported the call's effect only
// after it. An abort call is the sender's control.cancel, sent again when
// the replay reaches it.
func replayKimiWeb(bin string, env []string, fx Fixture) []string {
	rs := newKimiReplay(fx.Stream, fx.Scenario.Control != nil)
	tmp, home := "", ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			tmp = v
		}
		if v, ok := strings.CutPrefix(kv, "AEP_HOME="); ok {
			home = v
		}
	}
	tokenFile := filepath.Join(tmp, "server.token")
	if err := os.WriteFile(tokenFile, []byte("replay-token\n"), 0o600); err != nil {
		return []string{err.Error()}
	}
	var args []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	senderDone := make(chan struct{})
	close(senderDone)
	if c := fx.Scenario.Control; c != nil {
		url, stop, err := replayRelay(bin, tmp, home, c)
		if err != nil {
			return []string{err.Error()}
		}
		defer stop()
		if !c.Down {
			senderDone = make(chan struct{})
			go func() {
				defer close(senderDone)
				sendAnswers(ctx, url, c.Answers, func(i int, outcome string) {
					if want := c.Answers[i].Outcome; outcome != want {
						rs.problem(fmt.Sprintf("control: request %d settled %q, recorded %q", i+1, outcome, want))
					}
				})
			}()
			rs.cancel = func(session string) {
				if err := (Sender{URL: url, Token: controlSenderTok, As: controlSender}).Cancel(session, kwCancelID); err != nil {
					rs.problem("control: the cancel: " + err.Error())
				}
			}
		}
		args = append(args, "--control", "--relay", url)
		env = append(append([]string(nil), env...), controlEnv(c, url, c.Budget)...)
	}
	// The stand-in serves only once rs is whole (its cancel set).
	srv := httptest.NewServer(rs)
	defer func() {
		close(rs.stop) // let go of the open connections, then stop serving
		srv.Close()
	}()
	args = append([]string{"follow", "kimi-web", "--url", srv.URL, "--token-file", tokenFile, "--mode", "primary"}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return []string{err.Error()}
	}
	select {
	case <-rs.done:
	case <-time.After(2 * time.Minute):
		rs.problem("the replay did not finish within 2 minutes")
	}
	// Let the bridge hand the last frames to the emitter, then stop it.
	time.Sleep(300 * time.Millisecond)
	cancel()
	<-senderDone
	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			rs.problem(fmt.Sprintf("aep-hook follow kimi-web: %v\n%s", err, out.String()))
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		rs.problem("aep-hook follow kimi-web did not stop on SIGTERM")
	}
	return rs.problems()
}

// kimiReplay is the stand-in server.
type kimiReplay struct {
	conns [][]StreamLine            // per connection, its lines (and, gated, the bridge's calls)
	rest  map[string][]HTTPExchange // per method and path, the answers in order
	mu    sync.Mutex
	next  int // the next connection to play
	bad   []string
	done  chan struct{} // every connection played
	stop  chan struct{} // the bridge stopped: let go of open connections
	once  sync.Once
	// calls carries the method and path of each call the bridge made
	// other than a read (a decision, an answer, an abort), when gated.
	calls chan string
	// cancel, when set, sends the recorded control.cancel for a session:
	// the replay reached the abort call it led to.
	cancel func(session string)
}

// newKimiReplay splits the recording into its connections and its REST
// answers. gated keeps the bridge's own calls in their connection's
// place, so that what the server said after each is held back until the
// bridge makes it.
func newKimiReplay(lines []StreamLine, gated bool) *kimiReplay {
	rs := &kimiReplay{rest: map[string][]HTTPExchange{}, done: make(chan struct{}), stop: make(chan struct{}), calls: make(chan string, 256)}
	for _, l := range lines {
		if l.HTTP != nil {
			k := l.HTTP.Method + " " + l.HTTP.Path
			rs.rest[k] = append(rs.rest[k], *l.HTTP)
			if !gated || l.HTTP.Method == http.MethodGet {
				continue
			}
		}
		for len(rs.conns) < l.Conn {
			rs.conns = append(rs.conns, nil)
		}
		if l.Conn > 0 {
			rs.conns[l.Conn-1] = append(rs.conns[l.Conn-1], l)
		}
	}
	if len(rs.conns) == 0 {
		rs.finish()
	}
	return rs
}

func (rs *kimiReplay) problem(p string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.bad = append(rs.bad, p)
}

func (rs *kimiReplay) problems() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]string(nil), rs.bad...)
}

func (rs *kimiReplay) finish() { rs.once.Do(func() { close(rs.done) }) }

func (rs *kimiReplay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		rs.serveWS(w, r)
		return
	}
	k := r.Method + " " + r.URL.RequestURI()
	rs.mu.Lock()
	q := rs.rest[k]
	var ex *HTTPExchange
	if len(q) > 0 {
		e := q[0]
		ex = &e
		if len(q) > 1 {
			rs.rest[k] = q[1:]
		}
	}
	rs.mu.Unlock()
	if r.Method != http.MethodGet {
		select {
		case rs.calls <- k:
		default: // more calls than any recording has: the gate reports it
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if ex == nil {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"code":40400,"msg":"not recorded","data":null}`))
		return
	}
	w.WriteHeader(ex.Status)
	w.Write(ex.Body)
}

// serveWS plays the next recorded connection.
func (rs *kimiReplay) serveWS(w http.ResponseWriter, r *http.Request) {
	rs.mu.Lock()
	n := rs.next
	rs.next++
	rs.mu.Unlock()
	var protos []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, s := range strings.Split(h, ",") {
			protos = append(protos, strings.TrimSpace(s))
		}
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: protos})
	if err != nil {
		return
	}
	c.SetReadLimit(64 << 20)
	defer c.CloseNow()
	if n >= len(rs.conns) {
		// A connection the recording does not have (the bridge
		// reconnecting as it is stopped): hold it open, silent.
		<-rs.stop
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sent := make(chan []byte, 1024)
	go func() {
		defer close(sent)
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			sent <- b
		}
	}()
	var bag [][]byte
	closed := false
	await := func(want json.RawMessage) bool {
		deadline := time.After(15 * time.Second)
		for {
			for i, b := range bag {
				if sameFrame(want, b) {
					bag = append(bag[:i], bag[i+1:]...)
					return true
				}
			}
			if closed {
				return false
			}
			select {
			case b, ok := <-sent:
				if !ok {
					closed = true
					continue
				}
				bag = append(bag, b)
			case <-deadline:
				return false
			}
		}
	}
	last := n == len(rs.conns)-1
	called := map[string]int{}
	awaitCall := func(ex *HTTPExchange) bool {
		k := ex.Method + " " + ex.Path
		if rs.cancel != nil && strings.HasSuffix(ex.Path, ":abort") {
			if sid, _, ok := strings.Cut(strings.TrimPrefix(ex.Path, "/api/v1/sessions/"), "/"); ok {
				go rs.cancel(sid)
			}
		}
		deadline := time.After(30 * time.Second)
		for called[k] == 0 {
			select {
			case c := <-rs.calls:
				called[c]++
			case <-deadline:
				return false
			}
		}
		called[k]--
		return true
	}
	for _, l := range rs.conns[n] {
		switch {
		case l.HTTP != nil:
			if !awaitCall(l.HTTP) {
				rs.problem(fmt.Sprintf("connection %d: the bridge did not call %s %s", n+1, l.HTTP.Method, l.HTTP.Path))
			}
		case l.End && l.Dir == "in":
			c.Close(websocket.StatusGoingAway, "recorded end")
			rs.leftovers(n, bag)
			if last {
				rs.finish()
			}
			return
		case l.End:
			// The bridge closed it when its recording was stopped.
		case l.Dir == "in":
			if err := c.Write(ctx, websocket.MessageText, l.Data); err != nil {
				rs.problem(fmt.Sprintf("connection %d: write: %v", n+1, err))
				return
			}
		case l.Dir == "out":
			if !await(l.Data) {
				rs.problem(fmt.Sprintf("connection %d: the bridge did not send %s", n+1, clipFrame(l.Data)))
			}
		}
	}
	rs.leftovers(n, bag)
	if last {
		rs.finish()
	}
	<-rs.stop
}

// leftovers reports frames the bridge sent that the recording does not
// have (pongs aside: the bridge answers pings in its own time).
func (rs *kimiReplay) leftovers(n int, bag [][]byte) {
	for _, b := range bag {
		if gjson.GetBytes(b, "type").String() != "pong" {
			rs.problem(fmt.Sprintf("connection %d: the bridge sent %s, which the recording does not have", n+1, clipFrame(b)))
		}
	}
}

// sameFrame reports whether the bridge's frame got is the recorded one:
// the same type and id, a pong's nonce, a subscribe's sessions and cursors.
func sameFrame(want json.RawMessage, got []byte) bool {
	w, g := gjson.ParseBytes(want), gjson.ParseBytes(got)
	if w.Get("type").String() != g.Get("type").String() || w.Get("id").String() != g.Get("id").String() {
		return false
	}
	switch w.Get("type").String() {
	case "pong":
		return w.Get("payload.nonce").String() == g.Get("payload.nonce").String()
	case "subscribe":
		return sortedJSON(w.Get("payload.session_ids")) == sortedJSON(g.Get("payload.session_ids")) &&
			canonical(w.Get("payload.cursors")) == canonical(g.Get("payload.cursors"))
	}
	return true
}

func sortedJSON(r gjson.Result) string {
	var ss []string
	for _, x := range r.Array() {
		ss = append(ss, x.String())
	}
	sort.Strings(ss)
	return strings.Join(ss, ",")
}

func canonical(r gjson.Result) string {
	var v any
	json.Unmarshal([]byte(r.Raw), &v)
	b, _ := json.Marshal(v)
	return string(b)
}

func clipFrame(b []byte) string {
	s := string(b)
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
