package deliver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseDestination(t *testing.T) {
	tests := []struct {
		in, raw, endpoint string
		kind              Kind
		err               string
	}{
		{"http://127.0.0.1:8787", "http://127.0.0.1:8787", "http://127.0.0.1:8787/events", AEP, ""},
		{"https://aep.example.com/base/", "https://aep.example.com/base", "https://aep.example.com/base/events", AEP, ""},
		{"otlp+http://localhost:4318", "otlp+http://localhost:4318", "http://localhost:4318/v1/logs", OTLP, ""},
		{"OTLP+HTTPS://otel.example.com", "otlp+https://otel.example.com", "https://otel.example.com/v1/logs", OTLP, ""},
		{"otlp+grpc://localhost:4317", "", "", 0, "gRPC is not supported"},
		{"ftp://x", "", "", 0, "unknown scheme"},
		{"http://user:pw@x", "", "", 0, "credentials"},
		{"http:///path", "", "", 0, "no host"},
		{"http://x/?a=b", "", "", 0, "query"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			d, err := ParseDestination(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "pw") {
					t.Errorf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil || d.Raw != tt.raw || d.Endpoint != tt.endpoint || d.Kind != tt.kind {
				t.Fatalf("got %+v, %v", d, err)
			}
		})
	}
	ds, err := ParseDestinations([]string{"http://a, otlp+http://b", "http://a"})
	if err != nil || len(ds) != 2 {
		t.Fatalf("comma list: %v %v", ds, err)
	}
}

func TestCheckToken(t *testing.T) {
	tests := []struct {
		dest, token string
		insecure    bool
		refused     bool
	}{
		{"http://10.1.2.3:8787", "Zq9tK", false, true},
		{"http://10.1.2.3:8787", "Zq9tK", true, false},
		{"http://10.1.2.3:8787", "", false, false},
		{"https://10.1.2.3:8787", "Zq9tK", false, false},
		{"http://127.0.0.1:8787", "Zq9tK", false, false},
		{"http://[::1]:8787", "Zq9tK", false, false},
		{"http://localhost:8787", "Zq9tK", false, false},
		{"otlp+http://collector.internal:4318", "Zq9tK", false, true},
	}
	for _, tt := range tests {
		d, err := ParseDestination(tt.dest)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckToken(d, tt.token, tt.insecure)
		if (err != nil) != tt.refused {
			t.Errorf("%s token=%q insecure=%v: err=%v", tt.dest, tt.token, tt.insecure, err)
		}
		if err != nil && strings.Contains(err.Error(), tt.token) {
			t.Errorf("error names the token")
		}
	}
}

// TestShipFaults runs ShipAll against a real loopback collector with one
// injected fault per case; afterwards every id must have been delivered at
// least once, in seq order per session.
func TestShipFaults(t *testing.T) {
	type fault = func(n int, batch []got, w http.ResponseWriter, r *http.Request) bool
	status := func(code int, body string) fault {
		return func(n int, _ []got, w http.ResponseWriter, _ *http.Request) bool {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			w.Write([]byte(body))
			return true
		}
	}
	badSeq := int64(7)
	reject400 := func(withIndex bool) fault {
		return func(_ int, batch []got, w http.ResponseWriter, _ *http.Request) bool {
			for i, g := range batch {
				if g.Seq == badSeq && g.Session == "s1" {
					w.WriteHeader(http.StatusBadRequest)
					if withIndex {
						w.Write([]byte(`{"error":"invalid-event","detail":"bad line","index":` + strconv.Itoa(i) + `}`))
					} else {
						w.Write([]byte(`{"error":"invalid-event","detail":"bad line"}`))
					}
					return true
				}
			}
			return false
		}
	}
	tests := []struct {
		name      string
		fault     fault
		token     string
		batch     int
		wantErr   string // ShipAll's error the first time
		rejected  int
		redeliver bool // after the first run, clear the fault and ship again
	}{
		{name: "accepted"},
		{name: "500 then 202", fault: func(n int, b []got, w http.ResponseWriter, r *http.Request) bool {
			if n <= 2 {
				return status(500, "")(n, b, w, r)
			}
			return false
		}},
		{name: "503 with Retry-After 0", fault: func(n int, b []got, w http.ResponseWriter, r *http.Request) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(503)
				return true
			}
			return false
		}},
		{name: "400 on one line, index given", fault: reject400(true), rejected: 1},
		{name: "400 on one line, no index", fault: reject400(false), rejected: 1},
		{name: "400 single event", fault: reject400(false), batch: 1, rejected: 1},
		{name: "426", fault: status(426, `{"versions":["0.2","1.0"]}`), wantErr: "it offers: 0.2, 1.0", redeliver: true},
		{name: "401", fault: status(401, ""), wantErr: "refused the credentials", redeliver: true},
		{name: "403", fault: status(403, ""), wantErr: "refused the credentials", redeliver: true},
		{name: "413 over 3 events", batch: 10, fault: func(_ int, b []got, w http.ResponseWriter, _ *http.Request) bool {
			if len(b) > 3 {
				w.WriteHeader(413)
				return true
			}
			return false
		}},
		{name: "bearer token", token: "s3cret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCollector(t)
			c.token = tt.token
			c.setFault(tt.fault)
			d := c.dest(t)
			s := newShipper(t, d)
			s.Token = tt.token
			s.BatchEvents = tt.batch
			var ids []string
			ids = append(ids, writeLog(t, s.LogRoot, "claude-code", "s1", 0, 20, nil)...)
			ids = append(ids, writeLog(t, s.LogRoot, "codex", "s2", 0, 15, nil)...)
			ids = append(ids, writeLog(t, s.LogRoot, "claude-code", "s1", 20, 5, nil)...)

			err := s.ShipAll(context.Background())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ShipAll err = %v, want %q", err, tt.wantErr)
				}
				if st := ReadStatus(s.Home, d); !st.Failing() || !strings.Contains(st.LastError, tt.wantErr) {
					t.Errorf("status = %+v", st)
				}
			} else if err != nil {
				t.Fatalf("ShipAll: %v", err)
			}
			if tt.redeliver {
				c.setFault(nil)
				if err := s.ShipAll(context.Background()); err != nil {
					t.Fatalf("second ShipAll: %v", err)
				}
				if st := ReadStatus(s.Home, d); st.Failing() {
					t.Errorf("status still failing after recovery: %+v", st)
				}
			}
			c.check()
			evs := c.received()
			want := ids
			if tt.rejected > 0 {
				rej := readRejected(t, s, d)
				if len(rej) != tt.rejected {
					t.Fatalf("rejected file has %d entries, want %d", len(rej), tt.rejected)
				}
				if rej[0].Detail != "bad line" || rej[0].Status != 400 || len(rej[0].Event) == 0 {
					t.Errorf("rejection = %+v", rej[0])
				}
				want = nil
				for _, id := range ids {
					if !strings.Contains(string(rej[0].Event), id) {
						want = append(want, id)
					}
				}
				if st := ReadStatus(s.Home, d); st.Rejected != int64(tt.rejected) {
					t.Errorf("status rejected = %d", st.Rejected)
				}
			}
			wantDelivered(t, evs, want)
			// Nothing left behind.
			lags, err := s.Report()
			if err != nil || len(lags) != 1 || lags[0].Events != 0 {
				t.Errorf("report after delivery: %+v %v", lags, err)
			}
			for _, f := range failures(t, s) {
				if tt.token != "" && strings.Contains(f.Error, tt.token) {
					t.Errorf("error log names the token: %s", f.Error)
				}
			}
		})
	}
}

// TestCollectorDown: nothing listens; ship gives up after RetryFor with the
// backlog kept, status reports it, and a later ship delivers it all.
func TestCollectorDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // now nothing listens there
	d, _ := ParseDestination("http://" + addr)
	s := newShipper(t, d)
	s.RetryFor = 50 * time.Millisecond
	ids := writeLog(t, s.LogRoot, "codex", "down", 0, 12, nil)
	if err := s.ShipAll(context.Background()); err == nil {
		t.Fatal("ShipAll succeeded with nothing listening")
	}
	lags, _ := s.Report()
	if len(lags) != 1 || lags[0].Events != 12 || lags[0].Oldest == "" || !lags[0].Failing() {
		t.Fatalf("report while down: %+v", lags)
	}
	// The collector comes up on the same address.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port reused meanwhile: %v", err)
	}
	c := &collector{t: t}
	srv := &http.Server{Handler: http.HandlerFunc(c.serve)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	if err := s.ShipAll(context.Background()); err != nil {
		t.Fatalf("ShipAll after recovery: %v", err)
	}
	c.check()
	wantDelivered(t, c.received(), ids)
}

// TestHookHangingCollector: the hook path gives up at its deadline while
// the collector hangs; after it recovers, ShipAll delivers everything.
func TestHookHangingCollector(t *testing.T) {
	c := newCollector(t)
	release := make(chan struct{})
	c.setFault(func(_ int, _ []got, w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-release:
			return false
		case <-r.Context().Done():
			return true
		}
	})
	d := c.dest(t)
	s := newShipper(t, d)
	ids := writeLog(t, s.LogRoot, "claude-code", "hang", 0, 8, nil)

	ctx, cancel := context.WithTimeout(context.Background(), DefaultHookDeadline)
	defer cancel()
	done := make(chan time.Duration, 1)
	start := time.Now()
	go func() {
		s.Hook(ctx, "claude-code", []string{LogRel("claude-code", "hang")})
		done <- time.Since(start)
	}()
	select {
	case el := <-done:
		t.Logf("hook delivery returned after %s (deadline %s)", el, DefaultHookDeadline)
	case <-time.After(20 * time.Second): // a hang guard, not a performance bound
		t.Fatal("hook delivery did not return")
	}
	fs := failures(t, s)
	if len(fs) == 0 || !strings.Contains(fs[len(fs)-1].Error, "deadline") {
		t.Errorf("no deadline failure recorded: %+v", fs)
	}
	close(release)
	if err := s.ShipAll(context.Background()); err != nil {
		t.Fatalf("ShipAll after recovery: %v", err)
	}
	c.check()
	wantDelivered(t, c.received(), ids)
}

// TestTruncateAndReplace: a log truncated or replaced under its cursor is
// shipped again from its start; nothing of the new content is skipped.
func TestTruncateAndReplace(t *testing.T) {
	for _, mode := range []string{"truncate", "replace", "truncate-longer"} {
		t.Run(mode, func(t *testing.T) {
			c := newCollector(t)
			d := c.dest(t)
			s := newShipper(t, d)
			first := writeLog(t, s.LogRoot, "codex", "rot", 0, 10, nil)
			if err := s.ShipAll(context.Background()); err != nil {
				t.Fatal(err)
			}
			p := s.LogRoot + "/" + LogRel("codex", "rot")
			n := 3
			switch mode {
			case "truncate":
				if err := truncate(p); err != nil {
					t.Fatal(err)
				}
			case "replace":
				if err := rename(p, p+".old"); err != nil {
					t.Fatal(err)
				}
			case "truncate-longer":
				truncate(p)
				n = 14 // longer than before: size alone would not tell
			}
			second := writeLog(t, s.LogRoot, "codex", "rot", 100, n, nil)
			if err := s.ShipAll(context.Background()); err != nil {
				t.Fatal(err)
			}
			wantDelivered(t, c.received()[:10], first)
			wantDelivered(t, c.received()[10:], second)
		})
	}
}

// TestBackpressure: with Pressure on and a tiny queue bound, debug/info
// events beyond it are skipped and counted, notice and above never.
func TestBackpressure(t *testing.T) {
	c := newCollector(t)
	d := c.dest(t)
	s := newShipper(t, d)
	s.Pressure = true
	s.QueueBytes = 4 << 10
	s.BatchEvents = 10
	sev := func(i int) string {
		switch i % 4 {
		case 0:
			return "debug"
		case 1:
			return ""
		case 2:
			return "notice"
		}
		return "error"
	}
	ids := writeLog(t, s.LogRoot, "codex", "bp", 0, 200, sev)
	if err := s.ShipAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := c.received()
	var must []string
	for i, id := range ids {
		if i%4 >= 2 {
			must = append(must, id)
		}
	}
	wantDelivered(t, evs, must)
	dropped := 200 - len(evs)
	if dropped == 0 {
		t.Fatal("nothing dropped under pressure")
	}
	if last := evs[len(evs)-1]; last.Seq != 199 {
		t.Errorf("tail not delivered: last seq %d", last.Seq)
	}
	st := ReadStatus(s.Home, d)
	if st.Dropped != int64(dropped) {
		t.Errorf("status dropped = %d, want %d", st.Dropped, dropped)
	}
	lost := 0
	for _, f := range failures(t, s) {
		if f.Stage == "backpressure" {
			lost += f.Lost
		}
	}
	if lost != dropped {
		t.Errorf("error log counts %d dropped, want %d", lost, dropped)
	}
}

func TestClassOf(t *testing.T) {
	if classOf(errors.New("x")) != Retry || classOf(&SendError{Class: Fatal}) != Fatal {
		t.Fatal("classOf")
	}
}
