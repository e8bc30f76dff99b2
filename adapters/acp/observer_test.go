package acp

import (
	"fmt"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
)

// TestObserverBacksOffInBurst: after a batch that cost d of its processor
// time, the observer lingers lingerFactor·d while observation keeps up,
// and burstFactor·d once it has lost something since the last batch or
// the queue was nearly full when the batch began (the relays are about to
// pass stretches on unread).
func TestObserverBacksOffInBurst(t *testing.T) {
	var now time.Duration
	clock := func() time.Duration { now += time.Millisecond; return now } // each batch costs 1 ms
	q := newQueue(64, 1<<20)
	st := &Stats{}
	o := &observer{q: q, join: newJoiner(), stats: st, maxLine: 1 << 20, clock: clock}
	stop := make(chan struct{})
	close(stop) // no linger before a batch: the test sets none
	line := item{chunk: []byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}` + "\n"), lines: 1}
	batch := func() time.Duration {
		t.Helper()
		if !q.offer(line) {
			t.Fatal("queue refused a line")
		}
		o.take(<-q.ch, stop)
		for len(q.ch) > 0 {
			q.taken(<-q.ch)
		}
		return o.wait
	}
	if w := batch(); w != lingerFactor*time.Millisecond {
		t.Errorf("keeping up: linger %v, want %v", w, lingerFactor*time.Millisecond)
	}
	st.drop(AgentToClient, 3)
	if w := batch(); w != burstFactor*time.Millisecond {
		t.Errorf("after a loss: linger %v, want %v", w, burstFactor*time.Millisecond)
	}
	if w := batch(); w != lingerFactor*time.Millisecond {
		t.Errorf("loss over: linger %v, want %v", w, lingerFactor*time.Millisecond)
	}
	for !q.nearlyFull() {
		if !q.offer(line) {
			t.Fatal("queue full before nearly full")
		}
	}
	if w := batch(); w != burstFactor*time.Millisecond {
		t.Errorf("queue nearly full: linger %v, want %v", w, burstFactor*time.Millisecond)
	}
}

// TestClassifyOwnsItsStrings: classify reads the line in place, so what it
// returns and what the joiner keeps must be copies, not pieces of the
// line, whose buffer is reused once its batch is done; and the strings it
// keeps once for a busy connection stay bounded.
func TestClassifyOwnsItsStrings(t *testing.T) {
	j := newJoiner()
	tests := []struct {
		dir  Direction
		line string
		want mapping.Facts
	}{
		{ClientToAgent, `{"jsonrpc":"2.0","id":"p1","method":"session/prompt","params":{"sessionId":"s1"}}`,
			mapping.Facts{Kind: mapping.KindRequest, Direction: mapping.ToAgent, Method: "session/prompt", Session: "s1", ID: "p1"}},
		{AgentToClient, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}`,
			mapping.Facts{Kind: mapping.KindNotification, Direction: mapping.FromAgent, Method: "session/update", Session: "s1"}},
		{AgentToClient, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{}}}`,
			mapping.Facts{Kind: mapping.KindNotification, Direction: mapping.FromAgent, Method: "session/update", Session: "s2"}},
		{AgentToClient, `{"jsonrpc":"2.0","id":"p1","result":{"stopReason":"end_turn"}}`,
			mapping.Facts{Kind: mapping.KindResponse, Direction: mapping.FromAgent, Method: "session/prompt", Session: "s1", ID: "p1"}},
	}
	var got []mapping.Facts
	var hooks []string
	for _, tt := range tests {
		line := []byte(tt.line)
		f, err := j.classify(tt.dir, line)
		if err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		hooks = append(hooks, j.hook(f))
		for i := range line {
			line[i] = 'x' // the buffer reused
		}
		got = append(got, f)
	}
	for i, tt := range tests {
		if got[i] != tt.want {
			t.Errorf("%s: facts %+v after the line was overwritten, want %+v", tt.line, got[i], tt.want)
		}
		if h := mapping.ACPHook(tt.want); hooks[i] != h {
			t.Errorf("%s: hook %q, want the table's %q", tt.line, hooks[i], h)
		}
	}
	for i := range 2 * maxInterned {
		line := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"x/m%d","params":{}}`, i)
		f, err := j.classify(ClientToAgent, line)
		if err != nil {
			t.Fatal(err)
		}
		j.hook(f)
	}
	if len(j.methods) > maxInterned || len(j.hooks) > maxInterned {
		t.Errorf("kept %d methods and %d hooks, want at most %d each", len(j.methods), len(j.hooks), maxInterned)
	}
}
