package deliver

import (
	"bytes"
	"io"
	"testing"

	"github.com/aep-hook/aep-hook/redact"
)

func FuzzParseDestination(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8787", "otlp+https://h/base/", "otlp+grpc://x", "http://u:p@h", "%zz", "http://[::1]:1/a%2Fb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDestination(s)
		if err != nil {
			return
		}
		if d.Kind != AEP && d.Kind != OTLP || d.Endpoint == "" || d.Key() == "" {
			t.Fatalf("accepted %q as %+v", s, d)
		}
		if _, err := ParseDestination(d.Raw); err != nil {
			t.Fatalf("Raw %q of %q does not parse: %v", d.Raw, s, err)
		}
	})
}

func FuzzRejectInfo(f *testing.F) {
	for _, s := range []string{`{"error":"invalid-event","detail":"x","index":3}`, `{"detail":{"line":2}}`, `not json`, `{"index":-1}`, `{"index":1e300}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		idx, _ := rejectInfo(b)
		if idx < -1 {
			t.Fatalf("index %d", idx)
		}
	})
}

func FuzzLogs(f *testing.F) {
	f.Add([]byte(`{"aep":"0.1","id":"A","type":"t.x","time":"2026-07-03T10:00:00.000Z","source":"aep://h/agent/a","agent":"a","seq":1,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","data":{"gen_ai.x":1.5,"b":[1,{"c":null}]}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"aep":"0.1","id":"A","type":"t","time":"bad","source":"s","agent":"a"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		Logs([][]byte{line}, redact.Metadata)
	})
}

func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), 2)
	f.Add([]byte("\n\n\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max <= 0 || max > 1<<16 {
			max = 8
		}
		lr := newLineReader(bytes.NewReader(data), 0, int64(len(data)), max)
		var total int64
		for {
			line, at, err := lr.next()
			if err == io.EOF {
				break
			}
			if at != total {
				t.Fatalf("line at %d, want %d", at, total)
			}
			if err == nil {
				if len(line) == 0 || line[len(line)-1] != '\n' || !bytes.Equal(line, data[at:at+int64(len(line))]) {
					t.Fatalf("bad line %q", line)
				}
			} else if err != errTooLong {
				t.Fatal(err)
			}
			total = lr.off
		}
		if last := bytes.LastIndexByte(data, '\n'); total != int64(last+1) {
			t.Fatalf("stopped at %d, last newline at %d", total, last)
		}
	})
}
