package agui_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/adapters/agui"
	"github.com/aep-hook/aep-hook/harness/sinktest"
)

// TestProxyClosesInterruptedRun: a run whose stream ends without
// RUN_FINISHED or RUN_ERROR is closed by how it ended, and doctor's error
// log says so; a run that finished is left alone.
func TestProxyClosesInterruptedRun(t *testing.T) {
	started := "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n"
	for _, c := range []struct {
		name string
		// upstream writes after RUN_STARTED and then ends as it likes;
		// leave is closed when the UI has read RUN_STARTED.
		upstream func(w http.ResponseWriter, r *http.Request, leave <-chan struct{})
		abort    bool // the UI goes away after RUN_STARTED
		want     []string
		data     map[string]any
	}{
		{name: "upstream drops", upstream: func(w http.ResponseWriter, r *http.Request, leave <-chan struct{}) {
			<-leave
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		}, want: []string{"run.started", "run.failed"}, data: map[string]any{"reason": "upstream_dropped"}},
		{name: "upstream ends", upstream: func(w http.ResponseWriter, r *http.Request, leave <-chan struct{}) {
			<-leave
		}, want: []string{"run.started", "run.failed"}, data: map[string]any{"reason": "upstream_ended"}},
		{name: "UI aborts", abort: true, upstream: func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
			<-r.Context().Done()
		}, want: []string{"run.started", "run.cancelled"}, data: map[string]any{"by": "user"}},
		{name: "finished", upstream: func(w http.ResponseWriter, r *http.Request, leave <-chan struct{}) {
			io.WriteString(w, "data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n")
		}, want: []string{"run.started", "run.finished"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			leave := make(chan struct{})
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, started)
				w.(http.Flusher).Flush()
				c.upstream(w, r, leave)
			}))
			defer up.Close()
			u, _ := url.Parse(up.URL)
			sink := &sinktest.Sink{}
			fails := &sinktest.Failures{}
			p := &agui.Proxy{Upstream: u, Handle: newEmitter(sink), Errors: fails}
			srv := httptest.NewServer(p)
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/run", strings.NewReader(`{"threadId":"t","runId":"r"}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(resp.Body)
			if got, err := readEvent(br); err != nil || got != started {
				t.Fatalf("first event %q %v", got, err)
			}
			if c.abort {
				cancel()
			}
			close(leave)
			io.Copy(io.Discard, br)
			resp.Body.Close()
			p.Wait()
			evs := sink.Events("t")
			var types []string
			for _, e := range evs {
				types = append(types, e.Type)
			}
			if !reflect.DeepEqual(types, c.want) {
				t.Fatalf("log %v, want %v", types, c.want)
			}
			last := evs[len(evs)-1]
			for k, v := range c.data {
				if last.Data[k] != v {
					t.Errorf("%s data %v, want %s %v", last.Type, last.Data, k, v)
				}
			}
			if last.Run != "r" || last.Cause != evs[0].ID {
				t.Errorf("%s run %q cause %q", last.Type, last.Run, last.Cause)
			}
			if n, want := fails.Stages()["interrupted"], len(c.data); (n > 0) != (want > 0) {
				t.Errorf("interrupted failures %d: %v", n, fails.All())
			}
		})
	}
}
