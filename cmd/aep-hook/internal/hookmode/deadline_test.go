package hookmode

import (
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/hook"
)

func TestDeadline(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		note string // a part of the note, "" for none
	}{
		{"", hook.DefaultDeadline, ""},
		{"2s", 2 * time.Second, ""},
		{"30s", 30 * time.Second, ""},
		{"30.001s", MaxDeadline, "over the 30s cap"},
		{"45s", MaxDeadline, "over the 30s cap"},
		{"24h", MaxDeadline, "over the 30s cap"},
		{"0", hook.DefaultDeadline, "not a positive duration"},
		{"-1s", hook.DefaultDeadline, "not a positive duration"},
		{"soon", hook.DefaultDeadline, "not a positive duration"},
	}
	for _, c := range cases {
		d, note := Deadline(c.in)
		if d != c.want || (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
			t.Errorf("Deadline(%q) = %s, %q; want %s, a note with %q", c.in, d, note, c.want, c.note)
		}
	}
}
