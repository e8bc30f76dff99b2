package kimiweb

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

func TestAccepted(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		ok     bool
	}{
		{200, `{"code":0,"msg":"success","data":{}}`, true},
		{200, `{"code":40401,"msg":"approval not found"}`, false},
		{200, `true`, false},
		{404, `{"code":0}`, false},
		{200, ``, false},
	} {
		if _, ok := Accepted(tc.status, []byte(tc.body)); ok != tc.ok {
			t.Errorf("%d %s: %v", tc.status, tc.body, ok)
		}
	}
}

// FuzzAccepted: any answer of the server's is read without a panic, and
// only a 2xx can be taken.
func FuzzAccepted(f *testing.F) {
	f.Add(200, `{"code":0}`)
	f.Add(500, `{"code":1}`)
	f.Fuzz(func(t *testing.T, status int, body string) {
		if _, ok := Accepted(status, []byte(body)); ok && status/100 != 2 {
			t.Fatalf("HTTP %d taken", status)
		}
	})
}

// TestDeliverQuestionRoutes: a question card's answers go to its answer
// route with the JSON body, its dismissal to its dismiss route with no
// body and no content type, as the web UI calls them; both with the
// server's token. The server's code 40909 with data.dismissed is the
// dismissal applied (kimi-code 2.1.0 answers so); without it, a refusal.
func TestDeliverQuestionRoutes(t *testing.T) {
	type call struct{ path, auth, ctype, body string }
	var got []call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, call{r.URL.EscapedPath(), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)})
		switch len(got) {
		case 2: // kimi-code 2.1.0's answer to a dismissal it applied
			io.WriteString(w, `{"code":40909,"msg":"question question_1 dismissed","data":{"dismissed":true,"dismissed_at":"2026-12-02T07:46:46.164Z"}}`)
			return
		case 3:
			io.WriteString(w, `{"code":40909,"msg":"question already resolved"}`)
			return
		}
		io.WriteString(w, `{"code":0,"msg":"success","data":{}}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	b := &Bridge{Base: u, Token: "tok"}
	m := mapping.Moment{Raw: []byte(`{"type":"event.question.requested","session_id":"session_1","payload":{"question_id":"question_1","questions":[]}}`),
		Facts: mapping.Facts{Kind: mapping.KindEvent, Name: "event.question.requested"}}
	deliver := b.Deliver(m, nil)
	if deliver == nil {
		t.Fatal("a question card is not delivered")
	}
	if err := deliver([]byte(`{"answers":{"q_0":{"kind":"single","option_id":"opt_0_0"}}}`)); err != nil {
		t.Fatal(err)
	}
	if err := deliver(mapping.KimiWebQuestionDismissed); err != nil {
		t.Fatal(err)
	}
	if err := deliver(mapping.KimiWebQuestionDismissed); err == nil {
		t.Error("a dismissal the server refused was taken")
	}
	want := []call{
		{"/api/v1/sessions/session_1/questions/question_1", "Bearer tok", "application/json", `{"answers":{"q_0":{"kind":"single","option_id":"opt_0_0"}}}`},
		{"/api/v1/sessions/session_1/questions/question_1:dismiss", "Bearer tok", "", ""},
		{"/api/v1/sessions/session_1/questions/question_1:dismiss", "Bearer tok", "", ""},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls\n%v\nwant\n%v", got, want)
	}
	noID := m
	noID.Raw = []byte(`{"type":"event.question.requested","session_id":"session_1","payload":{"questions":[]}}`)
	if b.Deliver(noID, nil) != nil {
		t.Error("a card with no id is delivered")
	}
}
