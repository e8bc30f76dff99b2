package httptee

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/shim"
)

func TestJSONBody(t *testing.T) {
	tests := []struct {
		name, method, ctype, body string
		limit                     int64
		ok                        bool
	}{
		{"within the bound", http.MethodPost, "application/json; charset=utf-8", `{"a":1}`, 64, true},
		{"over the bound", http.MethodPost, "application/json", `{"a":"0123456789"}`, 4, false},
		{"not JSON", http.MethodPost, "text/plain", `hello`, 64, false},
		{"not a POST", http.MethodPut, "application/json", `{}`, 64, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest(tt.method, "http://x/", strings.NewReader(tt.body))
			r.Header.Set("Content-Type", tt.ctype)
			got, ok := JSONBody(r, tt.limit)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if ok && string(got) != tt.body {
				t.Errorf("body %q", got)
			}
			// Whatever was read, the whole body is still forwarded.
			fwd, _ := io.ReadAll(r.Body)
			if string(fwd) != tt.body {
				t.Errorf("forwarded %q, want %q", fwd, tt.body)
			}
		})
	}
}

// failingReader returns its bytes, then err.
type failingReader struct {
	b   []byte
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, r.err
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func TestBodyEnds(t *testing.T) {
	broken := errors.New("connection reset")
	tests := []struct {
		name      string
		err       error // what the upstream body returns after its bytes
		readAll   bool  // read to the end before closing
		want      error
		wantBytes string
	}{
		{"read to its end", io.EOF, true, nil, "data: 1\n\n"},
		{"cut by the upstream", broken, true, broken, "data: 1\n\n"},
		{"closed before its end", io.EOF, false, ErrClosed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fed strings.Builder
			var ends []error
			b := &Body{RC: io.NopCloser(&failingReader{b: []byte("data: 1\n\n"), err: tt.err}),
				Feed: func(p []byte) { fed.Write(p) }, End: func(err error) { ends = append(ends, err) }}
			if tt.readAll {
				got, err := io.ReadAll(b)
				if string(got) != "data: 1\n\n" || !errors.Is(err, tt.want) {
					t.Fatalf("read %q, %v", got, err)
				}
			}
			b.Close()
			if len(ends) != 1 || !errors.Is(ends[0], tt.want) || (tt.want == nil && ends[0] != nil) {
				t.Errorf("ends %v, want [%v]", ends, tt.want)
			}
			if fed.String() != tt.wantBytes {
				t.Errorf("fed %q, want %q", fed.String(), tt.wantBytes)
			}
		})
	}
}

func TestReverseProxyUpstreamFailure(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	u, _ := url.Parse(dead.URL)
	dead.Close()
	var got []shim.Failure
	rp := ReverseProxy(u, nil, nil, nil, func(f shim.Failure) { got = append(got, f) })
	w := httptest.NewRecorder()
	rp.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/rpc", strings.NewReader("{}")))
	if w.Code != http.StatusBadGateway {
		t.Errorf("status %d, want 502", w.Code)
	}
	if len(got) != 1 || got[0].Stage != "upstream" || !strings.HasPrefix(got[0].Error, "POST /rpc: ") {
		t.Errorf("recorded %+v", got)
	}
}

// An upstream cut in the middle of a body is what the proxy would log: it
// is recorded as a relay failure instead of printed on the tee's stderr.
func TestReverseProxyCutBodyRecorded(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "0123456789")
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	var got []shim.Failure
	rp := ReverseProxy(u, nil, nil, nil, func(f shim.Failure) { got = append(got, f) })
	w := httptest.NewRecorder()
	rp.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/events", nil))
	if w.Body.String() != "0123456789" {
		t.Errorf("relayed %q", w.Body.String())
	}
	// Outside a real server the proxy adds a second line ("suppressing
	// panic ... in test"); the first is the one a tee would print.
	if len(got) == 0 || got[0].Stage != "relay" || !strings.Contains(got[0].Error, "body copy") {
		t.Errorf("recorded %+v", got)
	}
}
