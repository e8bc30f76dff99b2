package tail

import (
	"bytes"
	"strings"
	"testing"
)

// TestTimeline: what an attention follow-up settles, a failed tool's error
// type, a cancelled run's by and reason, runs and requests that never
// closed, and the subject column aligned across long x.* types and run
// indentation.
func TestTimeline(t *testing.T) {
	in := strings.Join([]string{
		evLine("codex", "s", "e1", "run.started", "10:00:01.000", ""),
		evLine("codex", "s", "e2", "attention.requested", "10:00:02.000", `"subject":"shell","data":{"kind":"permission","prompt":"p"}`),
		evLine("codex", "s", "e3", "attention.resolved", "10:00:03.000", `"subject":"e2","data":{"resolution":"dismissed"}`),
		evLine("codex", "s", "e4", "tool.failed", "10:00:04.000", `"subject":"shell","data":{"tool":{"name":"shell"},"error":{"type":"exit_code","message":"x"}}`),
		strings.Replace(evLine("codex", "s", "e5", "run.cancelled", "10:00:05.000", `"data":{"by":"user","reason":"interrupted"}`), `"run":"r1"`, `"run":"r2"`, 1),
		strings.Replace(evLine("codex", "s", "e6", "run.started", "10:00:06.000", ""), `"run":"r1"`, `"run":"r3"`, 1),
		evLine("codex", "s", "e7", "attention.requested", "10:00:07.000", `"subject":"apply_patch","data":{"kind":"permission","prompt":"p"}`),
		strings.Replace(evLine("codex", "s", "e8", "x.codex.session.some_rather_long_vendor_moment", "10:00:08.000", `"subject":"SUBJ"`), `"run":"r1",`, "", 1),
		"not json\n",
	}, "")
	var out bytes.Buffer
	st, err := Timeline(strings.NewReader(in), &out, TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st != (TimelineStats{Events: 8, NotAEP: 1}) {
		t.Errorf("stats %+v", st)
	}
	got := out.String()
	for _, want := range []string{
		"(resolution=dismissed)  <- permission shell",
		"tool.failed", "(error=exit_code)",
		"(by=user reason=interrupted)",
		"line 9: not an AEP event",
		"never closed: run 1 (r1), started 10:00:01.000",
		"never closed: run 3 (r3), started 10:00:06.000",
		"never closed: attention request e7 apply_patch, raised 10:00:07.000",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "run 2 (r2)") {
		t.Errorf("a cancelled run flagged as open:\n%s", got)
	}
	col := func(marker string) int {
		for _, l := range strings.Split(got, "\n") {
			if i := strings.Index(l, marker); i >= 0 && strings.Contains(l, "10:00") {
				return i
			}
		}
		t.Fatalf("no line with %q:\n%s", marker, got)
		return 0
	}
	if col("SUBJ") != col("apply_patch") || col("shell  (error") != col("apply_patch") {
		t.Errorf("subject column not aligned:\n%s", got)
	}
}

// TestTimelineColumns: a type longer than the column is shortened in the
// middle so the subject column stays put; debug-level events are hidden
// and counted unless asked for; a line without aep is not an AEP event.
func TestTimelineColumns(t *testing.T) {
	long := "x.opencode.session.message_part_updated_with_a_very_long_vendor_tail"
	in := strings.Join([]string{
		evLine("opencode", "s", "e1", "run.started", "10:00:01.000", `"subject":"SUBJ1"`),
		evLine("opencode", "s", "e2", long, "10:00:02.000", `"subject":"SUBJ2"`),
		evLine("opencode", "s", "e3", "x.opencode.session.status", "10:00:03.000", `"subject":"DBG","severity":"debug"`),
		`{"type":"user","message":"a transcript line, not AEP"}` + "\n",
	}, "")
	var out bytes.Buffer
	st, err := Timeline(strings.NewReader(in), &out, TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if st != (TimelineStats{Events: 3, Hidden: 1, NotAEP: 1}) {
		t.Errorf("stats %+v", st)
	}
	if column(t, got, "SUBJ1") != column(t, got, "SUBJ2") {
		t.Errorf("a long type pushed the subject column:\n%s", got)
	}
	for _, want := range []string{"x.opencode.session.mess…_a_very_long_vendor_tail SUBJ2", "line 4: not an AEP event",
		"(1 debug-level event(s) not shown; --debug shows them)"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "DBG") {
		t.Errorf("a debug event shown by default:\n%s", got)
	}
	out.Reset()
	if st, _ = Timeline(strings.NewReader(in), &out, TimelineOptions{Debug: true}); st.Hidden != 0 || !strings.Contains(out.String(), "DBG") {
		t.Errorf("--debug: %+v\n%s", st, out.String())
	}
}
