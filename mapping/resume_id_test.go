package mapping

import "testing"

// TestResumedSessionIDKept: a resumed session's AEP id is the vendor's
// session id (a UUID) joined to the moment's nonce (a ULID); the token rules
// the state store applies to vendor values read that join as one generated
// token, and the next moment's events went to a session named
// [REDACTED:secret]. The id the table mints must come back as it was made.
func TestResumedSessionIDKept(t *testing.T) {
	const (
		vendor = "a84e33ae-9206-472d-8642-f53049500c2d"
		nonce  = "01KBQ7Z5XW3M4N2P8R6T9V0Y1A"
	)
	for _, tc := range []struct {
		name  string
		begin func(st *State)
	}{
		{"SessionStart resume", func(st *State) { beginResume(Moment{Nonce: nonce}, st, vendor) }},
		{"early moment of the resumed process", func(st *State) { resumeEarly(Moment{Nonce: nonce}, st, vendor) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &State{}
			st.Set(stateAEPSession, vendor)
			tc.begin(st)
			if got, want := aepSession(st), vendor+"~r"+nonce; got != want {
				t.Errorf("AEP session %q, want %q", got, want)
			}
		})
	}
}
