package mapping

import "testing"

// TestBusToolStateNoPanic: a tool state entry of no known shape (a state
// file from elsewhere) is forgotten, never indexed past its end.
func TestBusToolStateNoPanic(t *testing.T) {
	st := &State{Entries: map[string]string{busToolKey("c1"): "x"}}
	busProfile{}.reusedCall(st, "c1", "msg_2")
	if v, ok := st.Get(busToolKey("c1")); ok {
		t.Errorf("kept %q", v)
	}
}
