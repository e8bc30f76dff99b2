package relay

import (
	"context"
	"net/http"

	"github.com/aep-hook/aep-hook/consumer/attrmatch"
	"github.com/aep-hook/aep-hook/consumer/relay/auth"
	"github.com/aep-hook/aep-hook/consumer/relay/event"
	"github.com/aep-hook/aep-hook/redact"
)

// Snapshot is what a subscription would replay from everything the
// relay holds, taken at one instant: the events a grant sees under a
// filter, in from:"all" order, and the capture ceiling they are
// delivered at. A handler mounted as Options.Console reads it to
// summarize the fleet without a stream.
type Snapshot struct {
	Events  []*event.Event
	Ceiling redact.Level
}

// Body is ev as this snapshot delivers it: the bytes a subscription
// with the same grant and capture would receive.
func (sn *Snapshot) Body(ev *event.Event) []byte { return render(ev, sn.Ceiling) }

// Snapshotter takes snapshots of a relay's buffers.
type Snapshotter interface {
	// Snapshot applies a subscription's rules (the filter's syntax, the
	// grant's scopes, tenant and capture ceiling) exactly as a
	// from:"all" subscription does; the error is the refusal such a
	// subscription would get, with its code.
	Snapshot(g *auth.Grant, filter []byte, capture string) (*Snapshot, error)
}

const snapKey ctxKey = 100

// SnapshotterFrom is the relay serving a request to its Options.Console
// handler; nil elsewhere.
func SnapshotterFrom(ctx context.Context) Snapshotter {
	s, _ := ctx.Value(snapKey).(Snapshotter)
	return s
}

// withSnapshotter hands the console handler its relay.
func (s *Server) withSnapshotter(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), snapKey, Snapshotter(s)))
}

// Snapshot implements Snapshotter.
func (s *Server) Snapshot(g *auth.Grant, filter []byte, capture string) (*Snapshot, error) {
	if g == nil {
		return nil, &subError{codeUnauthorized, "no token"}
	}
	f, ceiling, serr := checkRequest(g, filter, capture)
	if serr != nil {
		return nil, serr
	}
	h := s.hub
	h.mu.Lock()
	all := h.bufs.All()
	h.mu.Unlock()
	// All copies the held events under the lock and events are
	// read-only: filtering after it still sees that one instant.
	out := make([]*event.Event, 0, len(all))
	for _, ev := range all {
		if g.Sees(ev) && f.MatchAttrs(ev) {
			out = append(out, ev)
		}
	}
	return &Snapshot{Events: out, Ceiling: ceiling}, nil
}

// checkRequest reads a subscription's filter and capture and checks them
// against the grant: the one place both bindings and snapshots do so.
func checkRequest(g *auth.Grant, filter []byte, capture string) (attrmatch.Filter, redact.Level, *subError) {
	f := attrmatch.Filter{}
	if filter != nil {
		var err error
		if f, err = attrmatch.Parse(filter); err != nil {
			detail := err.Error()
			if ie, ok := err.(attrmatch.ErrInvalid); ok {
				detail = ie.Detail
			}
			return f, 0, &subError{codeInvalidFilter, detail}
		}
	}
	ceiling := redact.Full
	if capture != "" {
		l, err := redact.ParseLevel(capture)
		if err != nil {
			return f, 0, &subError{codeInvalidFilter, "capture is not one of none, metadata, redacted, full"}
		}
		ceiling = l
	}
	if err := g.Subscribable(f); err != nil {
		return f, 0, &subError{codeUnauthorized, err.Error()}
	}
	return f, g.Ceiling(ceiling), nil
}

// Code is the refusal's code (AEP-0003 §6.5): invalid-filter,
// limit-exceeded or unauthorized.
func (e *subError) Code() string { return e.code }
