package acp

import (
	"testing"
	"time"
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
