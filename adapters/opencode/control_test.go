package opencode

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim/control"
)

func TestReplyTaken(t *testing.T) {
	for body, want := range map[string]bool{"true": true, "true\n": true, "false": false, " false\n": false, "": true} {
		if got := ReplyTaken([]byte(body)); got != want {
			t.Errorf("%q: %v, want %v", body, got, want)
		}
	}
}

func TestRouteName(t *testing.T) {
	for path, want := range map[string]string{
		"/permission/per_1/reply": "/permission/{id}/reply",
		"/session/ses_1/abort":    "/session/{id}/abort",
	} {
		if got := routeName(path); got != want {
			t.Errorf("%s: %s", path, got)
		}
	}
}

// TestCancelAbortUnanswered: an abort the server holds past the reply
// bound (Kilo answers once the turn's model stream has stopped) was sent:
// the cancel is accepted and noted, its outcome left to the server's end
// of the turn; an abort the server refuses is refused.
func TestCancelAbortUnanswered(t *testing.T) {
	release := make(chan struct{})
	defer close(release) // before the servers close: a held handler lets go
	parent := t
	for _, tc := range []struct {
		name   string
		handle http.HandlerFunc
		reason string
	}{
		{"held past the bound", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, ""},
		{"refused", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusBadRequest) }, "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handle)
			parent.Cleanup(srv.Close)
			u, _ := url.Parse(srv.URL)
			b := &Bridge{Base: u}
			st := &mapping.State{Entries: map[string]string{}, Touch: map[string]uint64{}}
			v, _ := mapping.Lookup("opencode-sse")
			m := eventMoment([]byte(`{"type":"message.updated","properties":{"info":{"id":"msg_1","sessionID":"ses_1","role":"user"}}}`), "")
			m.Mode = mapping.Primary
			if _, err := v.Map(m, st); err != nil || mapping.OpenRun(st) == "" {
				t.Fatalf("no run open: %v", err)
			}
			var c control.Command
			c.ID, c.Session, c.Data.Scope = "cmd1", "ses_1", "run"
			_, reason, _ := b.Cancel(c, st)
			if reason != tc.reason {
				t.Fatalf("reason %q, want %q", reason, tc.reason)
			}
		})
	}
}

// TestDeliverQuestionRoutes: a question's answer goes to its reply route
// with the JSON body; its refusal to its reject route with no body and no
// content type, as the server's own client calls it; both in the
// directory the stream named, for an ask seen live or fetched.
func TestDeliverQuestionRoutes(t *testing.T) {
	type call struct{ path, query, ctype, body string }
	var got []call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, call{r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), string(b)})
		io.WriteString(w, "true")
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	b := &Bridge{Base: u}
	live := eventMoment([]byte(`{"type":"question.asked","properties":{"id":"que_1","sessionID":"ses_1","questions":[]}}`), "/w")
	fetched := recordMoment("question", "ses_1", []byte(`{"id":"que 2","sessionID":"ses_1","questions":[]}`))
	if err := b.Deliver(live, nil)([]byte(`{"answers":[["PG"]]}`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Deliver(live, nil)(mapping.BusQuestionRejected); err != nil {
		t.Fatal(err)
	}
	if err := b.Deliver(fetched, nil)(mapping.BusQuestionRejected); err != nil {
		t.Fatal(err)
	}
	want := []call{
		{"/question/que_1/reply", "directory=%2Fw", "application/json", `{"answers":[["PG"]]}`},
		{"/question/que_1/reject", "directory=%2Fw", "", ""},
		{"/question/que 2/reject", "", "", ""},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls\n%v\nwant\n%v", got, want)
	}
}
