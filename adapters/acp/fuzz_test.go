package acp

import (
	"bytes"
	"io"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
)

// FuzzDecode feeds arbitrary lines through the observer's classification
// and the map verb's decoder: whatever a peer sends, a classified message
// has a kind and an id that is the line's own, and the decoder hands the
// line over unchanged with the classifier's facts.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`,
		`{"jsonrpc":"2.0","id":"x\"y","error":{"code":-1,"message":"no"}}`,
		`{"method":"session/update","params":{"sessionId":"\u2028"}}`,
		`{"kind":"response","method":"session/prompt","id":7,"sessionId":"s","tee":"T","result":{}}`,
		`{"kind":"bogus"}`, `[1,2]`, `{}`, `{"id":null,"result":1}`, `not json`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ms, derr := Decode(line)
		if derr == nil && (len(ms) != 1 || !bytes.Equal(ms[0].Raw, line) || ms[0].Facts.Kind == mapping.KindNone) {
			t.Fatalf("Decode(%q) = %+v", line, ms)
		}
		if !gjson.ValidBytes(line) {
			return
		}
		j := newJoiner()
		for _, d := range []Direction{ClientToAgent, AgentToClient} {
			f, err := j.classify(d, line)
			if err != nil {
				continue
			}
			if f.Kind == mapping.KindNone || f.Direction != d.fact() {
				t.Fatalf("facts %+v of %s", f, line)
			}
			if id := gjson.GetBytes(line, "id"); f.ID != "" && f.ID != id.String() {
				t.Fatalf("id %q is not the line's %s", f.ID, id.Raw)
			}
			if !gjson.GetBytes(line, "kind").Exists() && d == ClientToAgent && (derr != nil || ms[0].Facts.Kind != f.Kind) {
				t.Fatalf("decoder and classifier disagree on %s: %v %+v / %+v", line, derr, ms, f)
			}
		}
	})
}

// FuzzRelay relays arbitrary bytes in arbitrary chunks: the output is the
// input, byte for byte, and the observer frames the queued chunks into the
// input's newline-separated lines (bounded ones only). With a queue too
// small for the input, no line is observed that was not sent whole.
func FuzzRelay(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\n"), uint8(3), uint8(16), false)
	f.Add([]byte("no newline"), uint8(1), uint8(4), false)
	f.Add([]byte("\r\n\n  \nxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nshort\n"), uint8(5), uint8(8), true)
	f.Fuzz(func(t *testing.T, in []byte, chunk, max uint8, tight bool) {
		st := &Stats{}
		q := newQueue(len(in)+1, 1<<30)
		if tight {
			q = newQueue(2, 1<<30)
		}
		var out bytes.Buffer
		r := &relay{src: &chunked{b: in, n: int(chunk) + 1}, dst: &out, q: q, max: int(max) + 1, stats: st}
		o := &observer{q: q, stats: st, maxLine: int(max) + 1}
		var got [][]byte
		drain := func() {
			for {
				select {
				case it := <-q.ch:
					o.frame(it)
					q.taken(it)
				default:
					return
				}
			}
		}
		r.dst = writerFunc(func(p []byte) (int, error) {
			if tight && len(q.ch) == cap(q.ch) && out.Len()%3 == 0 {
				drain() // an observer that sometimes keeps up
			}
			return out.Write(p)
		})
		if err := r.run(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("relay altered the stream")
		}
		drain()
		tooLong := 0
		for _, l := range o.lines {
			if l.b == nil {
				tooLong++
			} else {
				got = append(got, l.b)
			}
		}
		var want [][]byte
		wantLong := 0
		for _, l := range bytes.Split(in, []byte{'\n'}) {
			if len(l) > int(max)+1 {
				wantLong++
				continue
			}
			l = bytes.TrimSuffix(l, []byte{'\r'})
			if len(bytes.TrimSpace(l)) > 0 {
				want = append(want, l)
			}
		}
		if tight {
			// Every observed line is one of the input's, in order.
			k := 0
			for _, g := range got {
				for k < len(want) && !bytes.Equal(want[k], g) {
					k++
				}
				if k == len(want) {
					t.Fatalf("observed %q, which was not sent whole in that order", g)
				}
				k++
			}
			return
		}
		if len(got) != len(want) || tooLong != wantLong || int(st.TooLong.Load()) != wantLong {
			t.Fatalf("lines %d (too long %d), want %d (%d)", len(got), tooLong, len(want), wantLong)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("line %d: %q want %q", i, got[i], want[i])
			}
		}
	})
}

// writerFunc is a func as an io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// chunked reads b n bytes at a time.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := min(c.n, len(p), len(c.b))
	copy(p, c.b[:k])
	c.b = c.b[k:]
	return k, nil
}
