// Package sinktest has in-memory stand-ins for the shim's sink and error
// log, shared by the transport tests.
package sinktest

import (
	"encoding/json"
	"sync"

	"github.com/aep-hook/aep-hook/shim"
)

// Sink keeps every line it is given, per session. When Gate is non-nil each
// write first waits for it to close: a sink stuck on a slow disk.
type Sink struct {
	Gate chan struct{}
	mu   sync.Mutex
	got  map[string][][]byte
}

// Write implements shim.Sink.
func (s *Sink) Write(_, session string, lines [][]byte) error {
	if s.Gate != nil {
		<-s.Gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.got == nil {
		s.got = map[string][][]byte{}
	}
	s.got[session] = append(s.got[session], lines...)
	return nil
}

// Event is the part of a written event the transport tests assert.
type Event struct {
	Type    string         `json:"type"`
	Run     string         `json:"run"`
	Step    string         `json:"step"`
	Subject string         `json:"subject"`
	Cause   string         `json:"cause"`
	ID      string         `json:"id"`
	Data    map[string]any `json:"data"`
}

// Events decodes the session's lines in the order written.
func (s *Sink) Events(session string) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Event, 0, len(s.got[session]))
	for _, l := range s.got[session] {
		var e Event
		json.Unmarshal(l, &e)
		out = append(out, e)
	}
	return out
}

// Types lists the session's event types in the order written.
func (s *Sink) Types(session string) []string {
	var out []string
	for _, e := range s.Events(session) {
		out = append(out, e.Type)
	}
	return out
}

// Failures records internal failures in place of shim.ErrorLog.
type Failures struct {
	mu sync.Mutex
	fs []shim.Failure
}

// Record keeps f.
func (f *Failures) Record(x shim.Failure) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fs = append(f.fs, x)
	return true
}

// All returns what was recorded.
func (f *Failures) All() []shim.Failure {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]shim.Failure(nil), f.fs...)
}

// Stages counts the recorded failures by stage.
func (f *Failures) Stages() map[string]int {
	m := map[string]int{}
	for _, x := range f.All() {
		m[x.Stage]++
	}
	return m
}
