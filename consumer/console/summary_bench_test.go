package console

import (
	"encoding/json"
	"testing"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
	"github.com/aep-hook/aep-hook/harness/browser"
)

// BenchmarkSummary is the fleet summary of 500 sessions, 100,000 events,
// as FleetPath serves it (summarized and encoded).
func BenchmarkSummary(b *testing.B) {
	batches, _ := browser.Fleet(500, 200)
	var evs []*event.Event
	for _, batch := range batches {
		for _, l := range batch {
			ev, err := event.Parse([]byte(l))
			if err != nil {
				b.Fatal(err)
			}
			evs = append(evs, ev)
		}
	}
	raw := func(ev *event.Event) []byte { return ev.Raw }
	b.ResetTimer()
	for b.Loop() {
		if _, err := json.Marshal(summarize(evs, raw)); err != nil {
			b.Fatal(err)
		}
	}
}
