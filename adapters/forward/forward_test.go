package forward

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// failures keeps recorded failures.
type failures struct{ got []shim.Failure }

func (f *failures) Record(x shim.Failure) bool { f.got = append(f.got, x); return true }

func decodeLine(l []byte) ([]mapping.Moment, error) {
	if strings.HasPrefix(string(l), "bad") {
		return nil, errors.New("bad line")
	}
	return []mapping.Moment{{Raw: append([]byte(nil), l...)}}, nil
}

func TestForwarder(t *testing.T) {
	long := strings.Repeat("x", 40)
	cases := []struct {
		name          string
		in            string
		want          []string
		lost, skipped int
		failureStages []string
		handleErr     error
	}{
		{name: "lines in order, CRLF and blank lines", in: "a\r\n\nb\nc", want: []string{"a", "b", "c"}},
		{name: "a long line is skipped and recorded", in: "a\n" + long + "\nb\n", want: []string{"a", "b"}, skipped: 1, failureStages: []string{"read"}},
		{name: "exactly the bound passes", in: strings.Repeat("y", 32) + "\n", want: []string{strings.Repeat("y", 32)}},
		{name: "the plugin's lost report", in: "a\n{\"aep_lost\":3}\nb\n", want: []string{"a", "b"}, lost: 3, failureStages: []string{"plugin"}},
		{name: "a line that does not decode", in: "bad\nok\n", want: []string{"ok"}, skipped: 1, failureStages: []string{"parse"}},
		{name: "a failed write is recorded as lost", in: "a\n", want: []string{"a"}, handleErr: errors.New("disk full"), failureStages: []string{"write"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			errs := &failures{}
			n := 0
			f := &Forwarder{Name: "test", Decode: decodeLine, Errors: errs, MaxLine: 32, MaxBatch: 2,
				Nonce: func() string { n++; return fmt.Sprint(n) },
				Handle: func(ms []mapping.Moment) ([]shim.Result, error) {
					for _, m := range ms {
						got = append(got, string(m.Raw))
					}
					return make([]shim.Result, len(ms)), c.handleErr
				}}
			st, err := f.Run(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("moments %q, want %q", got, c.want)
			}
			if st.Lost != c.lost || st.Skipped != c.skipped {
				t.Errorf("lost %d skipped %d, want %d %d", st.Lost, st.Skipped, c.lost, c.skipped)
			}
			var stages []string
			for _, x := range errs.got {
				stages = append(stages, x.Stage)
				if x.Adapter != "test" {
					t.Errorf("failure without the adapter name: %+v", x)
				}
				if strings.Contains(x.Error, long) {
					t.Errorf("failure carries content: %+v", x)
				}
			}
			if strings.Join(stages, ",") != strings.Join(c.failureStages, ",") {
				t.Errorf("failures %v, want %v", stages, c.failureStages)
			}
		})
	}
}

// FuzzReadLines checks the line reader on arbitrary input: no line passes
// the bound, and the lines plus the skipped ones account for every
// non-blank line of the input.
func FuzzReadLines(f *testing.F) {
	f.Add([]byte("a\nbb\r\n\nccc"), uint8(2))
	f.Add([]byte(strings.Repeat("z", 300)+"\nok"), uint8(7))
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		m := int(max) + 1
		out := make(chan line, len(in)+1)
		if err := readLines(strings.NewReader(string(in)), m, out); err != nil {
			t.Fatal(err)
		}
		close(out)
		n := 0
		for l := range out {
			n++
			if len(l.data) > m {
				t.Fatalf("line of %d bytes passed the bound %d", len(l.data), m)
			}
		}
		want := 0
		parts := strings.Split(string(in), "\n")
		for i, l := range parts {
			if i < len(parts)-1 {
				l = strings.TrimSuffix(l, "\r") // CRLF ends a line; a lone CR does not
			}
			if l != "" {
				want++
			}
		}
		if n != want {
			t.Fatalf("%d lines out, %d non-blank lines in %q", n, want, in)
		}
	})
}
