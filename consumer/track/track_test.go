package track

import (
	"testing"

	"github.com/aep-hook/aep-hook/shim"
)

func TestTracker(t *testing.T) {
	ev := func(typ, run, id, subject, tm string) *shim.Event {
		return &shim.Event{Type: typ, Run: run, ID: id, Subject: subject, Time: tm, Source: "aep://h/agent/a/session/s", Agent: "a", Session: "s"}
	}
	var tr Tracker
	for _, e := range []*shim.Event{
		ev("run.started", "r1", "e1", "", "t1"),
		ev("attention.requested", "r1", "e2", "", "t2"),
		ev("attention.answered", "r1", "e3", "e2", "t3"),
		ev("run.started", "r2", "e4", "", "t4"),
		ev("attention.requested", "r2", "e5", "", "t5"),
		ev("attention.resolved", "r2", "e6", "e5", "t6"),
		ev("run.finished", "r2", "e7", "", "t7"),
	} {
		tr.Add(e)
	}
	runs, attn := tr.Runs(), tr.Attention()
	if len(runs) != 1 || runs[0].Run != "r1" {
		t.Fatalf("open runs %+v", runs)
	}
	if len(attn) != 1 || attn[0].ID != "e2" {
		t.Fatalf("pending attention %+v", attn)
	}
	if !tr.RunOpen("aep://h/agent/a/session/s", "s", "r1") || tr.RunOpen("aep://h/agent/a/session/s", "s", "r2") {
		t.Fatal("RunOpen")
	}
	tr.Add(ev("session.ended", "", "e8", "", "t8"))
	if !tr.Ended("aep://h/agent/a/session/s", "s") {
		t.Fatal("Ended")
	}
}
