package notify

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDeliversOncePerRouteAndRecordsEach(t *testing.T) {
	relay := newFakeRelay(t)
	phone, hook := newSink(t), newSink(t)
	s := settings(t, relay.srv.URL,
		RouteFile{Name: "phone", Type: "ntfy", URL: phone.srv.URL + "/secret-topic", Token: "tk_ntfytoken"},
		RouteFile{Name: "chat", Type: "webhook", URL: hook.srv.URL + "/hooks/T000/B000/XXXX", Template: "slack", Capture: "redacted"})
	home := t.TempDir()
	_, settled := start(t, s, home)
	<-relay.live
	at := time.Now().Add(-90 * time.Second)
	req := requested("01REQ", "cc-1", "permission", "Permission requested: Bash — rm -rf build", at)
	relay.push(req)
	relay.push(req) // a redelivery sends nothing more

	got := map[string]bool{}
	for range 2 {
		select {
		case r := <-settled:
			got[r] = true
		case <-time.After(20 * time.Second):
			t.Fatal("deliveries did not settle")
		}
	}
	if !got["phone"] || !got["chat"] {
		t.Fatalf("settled %v", got)
	}
	body, path, authz := phone.next(t)
	if path != "/" || authz != "Bearer tk_ntfytoken" || body["topic"] != "secret-topic" {
		t.Fatalf("ntfy got %v at %s (%s)", body, path, authz)
	}
	if body["title"] != "claude-code needs your permission: Bash" {
		t.Fatalf("title %q", body["title"])
	}
	// metadata: the synthesized prompt, never the command.
	if msg := body["message"].(string); strings.Contains(msg, "rm -rf") || !strings.Contains(msg, "session cc-1 on host-a, waiting 1m") {
		t.Fatalf("ntfy message at metadata: %q", msg)
	}
	chat, path, _ := hook.next(t)
	if path != "/hooks/T000/B000/XXXX" || !strings.Contains(chat["text"].(string), "rm -rf build") {
		t.Fatalf("slack got %v at %s", chat, path)
	}

	recs := map[string]map[string]any{}
	for range 2 {
		ev := relay.nextPosted()
		d := ev["data"].(map[string]any)
		recs[d["to"].(string)] = ev
	}
	for to, via := range map[string]string{"phone": "ntfy", "chat": "webhook"} {
		ev := recs[to]
		if ev == nil {
			t.Fatalf("no attention.routed to %s: %v", to, recs)
		}
		d := ev["data"].(map[string]any)
		if ev["type"] != "attention.routed" || ev["subject"] != "01REQ" || ev["cause"] != "01REQ" || ev["session"] != "cc-1" ||
			ev["run"] != "r1" || ev["agent"] != DefaultAgent || ev["source"] != "aep://router-host/agent/aep-hook-notify/session/cc-1" ||
			ev["capture"] != "metadata" || d["via"] != via {
			t.Fatalf("routed to %s: %v", to, ev)
		}
		if _, has := ev["seq"]; has {
			t.Fatalf("a foreign emitter's attention.routed carries seq: %v", ev)
		}
	}
	phone.none(t)
	hook.none(t)
	if phone.requests() != 1 || hook.requests() != 1 {
		t.Fatalf("requests: ntfy %d, webhook %d", phone.requests(), hook.requests())
	}
}

func TestResolvedRequestSendsNothing(t *testing.T) {
	at := time.Now()
	relay := newFakeRelay(t, requested("01OLD", "cc-2", "permission", "p", at), resolved("01OLD", "cc-2"))
	phone := newSink(t)
	s := settings(t, relay.srv.URL, RouteFile{Name: "phone", Type: "ntfy", URL: phone.srv.URL + "/t"})
	n, settled := start(t, s, t.TempDir())
	<-relay.live
	// The snapshot's resolved request is never sent; a live one is, and
	// once it settled nothing else is pending or in flight.
	relay.push(requested("01NEW", "cc-2", "permission", "p", at))
	waitSettled(t, settled, "phone")
	body, _, _ := phone.next(t)
	if !strings.Contains(body["message"].(string), "cc-2") {
		t.Fatalf("got %v", body)
	}
	if p := pendingKeys(t, n); len(p) != 0 {
		t.Fatalf("pending after the only delivery settled: %q", p)
	}
	phone.none(t)
	if phone.requests() != 1 {
		t.Fatalf("%d deliveries, want the one pending request's", phone.requests())
	}
}

func TestResolvedWhileDelayedSendsNothing(t *testing.T) {
	relay := newFakeRelay(t)
	phone := newSink(t)
	cf := &File{Relay: relay.srv.URL, Delay: "1h", Routes: []RouteFile{{Name: "phone", Type: "ntfy", URL: phone.srv.URL + "/t"}}}
	s, err := cf.Check()
	if err != nil {
		t.Fatal(err)
	}
	n, _ := start(t, s, t.TempDir())
	<-relay.live
	relay.push(requested("01DLY", "cc-3", "form", "p", time.Now()))
	relay.push(requested("01WAIT", "cc-3", "form", "p", time.Now()))
	relay.push(resolved("01DLY", "cc-3"))
	relay.push(requested("01DLY", "cc-3", "form", "p", time.Now())) // a redelivery after its resolution
	relay.push(requested("01BARRIER", "cc-3", "form", "p", time.Now()))
	for !slices.Contains(pendingKeys(t, n), "01BARRIER") {
		// the barrier in means every event before it was handled
	}
	if p := pendingKeys(t, n); strings.Join(p, ",") != "01BARRIER,01WAIT" {
		t.Fatalf("pending %q, want the barrier and the unresolved request", p)
	}
	if phone.requests() != 0 {
		t.Fatalf("%d deliveries before the delay", phone.requests())
	}
}

func TestFailingRouteRetriedWithoutDelayingOthers(t *testing.T) {
	relay := newFakeRelay(t)
	slow, fast := newSink(t), newSink(t)
	slow.hold = make(chan struct{})
	slow.fail = func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return 0
	}
	s := settings(t, relay.srv.URL,
		RouteFile{Name: "slow", Type: "webhook", URL: slow.srv.URL + "/h"},
		RouteFile{Name: "fast", Type: "webhook", URL: fast.srv.URL + "/h"})
	home := t.TempDir()
	_, settled := start(t, s, home)
	<-relay.live
	relay.push(requested("01RTY", "cc-4", "permission", "p", time.Now()))
	// The slow route's first attempt hangs; the fast one is delivered
	// meanwhile.
	waitSettled(t, settled, "fast")
	fast.next(t)
	close(slow.hold)
	waitSettled(t, settled, "slow: answered 503")
	waitSettled(t, settled, "slow: answered 503")
	waitSettled(t, settled, "slow")
	body, _, _ := slow.next(t)
	if body["request"] != "01RTY" {
		t.Fatalf("got %v", body)
	}
	if slow.requests() != 3 || fast.requests() != 1 {
		t.Fatalf("requests: slow %d (want 3), fast %d (want 1)", slow.requests(), fast.requests())
	}
	// One record per delivery: two, whatever the attempts.
	relay.nextPosted()
	relay.nextPosted()
	select {
	case b := <-relay.posted:
		t.Fatalf("a third record %s", b)
	default:
	}
	errs := readErrors(t, home)
	if !strings.Contains(errs, "route slow, request 01RTY, attempt 1: answered 503") || strings.Contains(errs, "/h") {
		t.Fatalf("error log:\n%s", errs)
	}
}

func TestPermanentFailureStops(t *testing.T) {
	relay := newFakeRelay(t)
	bad := newSink(t)
	bad.fail = func(int) int { return http.StatusNotFound }
	s := settings(t, relay.srv.URL, RouteFile{Name: "bad", Type: "webhook", URL: bad.srv.URL + "/gone"})
	_, settled := start(t, s, t.TempDir())
	<-relay.live
	relay.push(requested("01GONE", "cc-5", "permission", "p", time.Now()))
	waitSettled(t, settled, "bad: answered 404")
	relay.push(requested("01NEXT", "cc-5", "permission", "p", time.Now()))
	waitSettled(t, settled, "bad: answered 404")
	if bad.requests() != 2 {
		t.Fatalf("%d requests: a 404 is not retried", bad.requests())
	}
}

func TestReminder(t *testing.T) {
	relay := newFakeRelay(t)
	phone := newSink(t)
	cf := &File{Relay: relay.srv.URL, Remind: "1ms", Reminders: 2, Routes: []RouteFile{{Name: "phone", Type: "ntfy", URL: phone.srv.URL + "/t"}}}
	s, err := cf.Check()
	if err != nil {
		t.Fatal(err)
	}
	_, settled := start(t, s, t.TempDir())
	<-relay.live
	relay.push(requested("01REM", "cc-6", "permission", "p", time.Now()))
	for range 3 {
		waitSettled(t, settled, "phone")
	}
	titles := []string{}
	for range 3 {
		b, _, _ := phone.next(t)
		titles = append(titles, b["title"].(string))
	}
	if strings.HasPrefix(titles[0], "Reminder") || !strings.HasPrefix(titles[1], "Reminder: ") || !strings.HasPrefix(titles[2], "Reminder: ") {
		t.Fatalf("titles %q", titles)
	}
	for range 3 {
		relay.nextPosted()
	}
}

func TestRestartDeliversNothingTwice(t *testing.T) {
	at := time.Now()
	req := requested("01ONCE", "cc-7", "permission", "p", at)
	relay := newFakeRelay(t, req)
	phone := newSink(t)
	s := settings(t, relay.srv.URL, RouteFile{Name: "phone", Type: "ntfy", URL: phone.srv.URL + "/t"})
	home := t.TempDir()
	n, settled := start(t, s, home)
	waitSettled(t, settled, "phone")
	phone.next(t)
	relay.nextPosted()
	_ = n
	// A second notifier on the same home (a restart) reads the same
	// snapshot; the barrier is a new request's delivery.
	_, settled2 := start(t, s, home)
	<-relay.live
	<-relay.live
	relay.push(requested("01TWO", "cc-7", "permission", "p", at))
	for _, st := range []chan string{settled, settled2} {
		waitSettled(t, st, "phone")
		b, _, _ := phone.next(t)
		if !strings.Contains(b["message"].(string), "cc-7") {
			t.Fatal(b)
		}
	}
	if phone.requests() != 3 {
		t.Fatalf("%d deliveries, want 3 (01ONCE once, 01TWO to each notifier)", phone.requests())
	}
}

func TestKindsFilter(t *testing.T) {
	relay := newFakeRelay(t)
	phone := newSink(t)
	s := settings(t, relay.srv.URL, RouteFile{Name: "phone", Type: "ntfy", URL: phone.srv.URL + "/t"})
	_, settled := start(t, s, t.TempDir())
	<-relay.live
	relay.push(requested("01REV", "cc-8", "review", "p", time.Now()))
	relay.push(requested("01OLD", "cc-8", "permission", "p", time.Now().Add(-48*time.Hour)))
	relay.push(requested("01FORM", "cc-8", "form", "p", time.Now()))
	waitSettled(t, settled, "phone")
	b, _, _ := phone.next(t)
	if b["title"] != "claude-code has a question" {
		t.Fatalf("got %v", b)
	}
	if phone.requests() != 1 {
		t.Fatalf("%d deliveries: a review and a request older than max_age are not routed", phone.requests())
	}
}

// TestReminderOnClock: a reminder falls due N minutes after the delivery,
// not before, and never for a request settled meanwhile; without remind,
// none is armed. The clock is moved by hand: no test waits for it.
func TestReminderOnClock(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		remind    string
		reminders int
		settle    bool // the request is answered after the first delivery
		want      int  // deliveries in all after an hour
	}{
		{"off by default", "", 0, false, 1},
		{"one reminder after ten minutes", "10m", 0, false, 2},
		{"two reminders", "10m", 2, false, 3},
		{"never for a settled request", "10m", 2, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			relay := newFakeRelay(t)
			phone := newSink(t)
			clock := newFakeClock(t0)
			cf := &File{Relay: relay.srv.URL, Remind: c.remind, Reminders: c.reminders,
				Routes: []RouteFile{{Name: "phone", Type: "ntfy", URL: phone.srv.URL + "/t"}}}
			s, err := cf.Check()
			if err != nil {
				t.Fatal(err)
			}
			n, settled := startClocked(t, s, clock)
			onLoop(n, func() { n.onEvent([]byte(requested("01CLK", "cc-9", "permission", "p", t0))) })
			waitSettled(t, settled, "phone")
			b, _, _ := phone.next(t)
			if strings.HasPrefix(b["title"].(string), "Reminder") {
				t.Fatalf("first delivery %q", b["title"])
			}
			if c.settle {
				onLoop(n, func() { n.onEvent([]byte(resolved("01CLK", "cc-9"))) })
			}
			got := 1
			for minute := 1; minute <= 60; minute++ {
				// A timer that fires queues a delivery; none firing, nothing
				// can be sent (a settled request's timers are stopped).
				if clock.Advance(time.Minute) == 0 {
					continue
				}
				waitSettled(t, settled, "phone")
				b, _, _ := phone.next(t)
				got++
				if !strings.HasPrefix(b["title"].(string), "Reminder: ") || minute%10 != 0 {
					t.Fatalf("minute %d: %q", minute, b["title"])
				}
			}
			if got != c.want {
				t.Fatalf("%d deliveries, want %d", got, c.want)
			}
			onLoop(n, func() {})
			if clock.armed() != 0 {
				t.Fatalf("%d timers still armed", clock.armed())
			}
		})
	}
}
