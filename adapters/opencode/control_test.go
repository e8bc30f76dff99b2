package opencode

import "testing"

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
