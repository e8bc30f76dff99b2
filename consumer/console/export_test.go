package console

import (
	"encoding/json"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
)

// SummaryJSON is the fleet summary of evs (delivered as they are), as
// FleetPath serves it.
func SummaryJSON(evs []*event.Event) ([]byte, error) {
	return json.Marshal(summarize(evs, func(ev *event.Event) []byte { return ev.Raw }))
}
