package bus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Recorder is a reverse proxy in front of a real server that writes what
// the bridge reads through it into a tape: each event stream's bytes, as
// they arrive, into stream-N.sse, and each REST answer into the exchange
// list. Point `aep-hook follow --url` at it; call Tape when the scenario
// is over. Rewrite, when set, replaces machine paths in everything kept.
type Recorder struct {
	Dir     string
	Rewrite func([]byte) []byte

	proxy *httputil.ReverseProxy
	mu    sync.Mutex
	ex    []Exchange
	n     int
	open  []*streamFile
	bad   []string // answers the tape cannot keep
}

// streamFile is one event stream being written.
type streamFile struct {
	mu  sync.Mutex
	buf bytes.Buffer
	x   *Exchange
}

// NewRecorder proxies to upstream and records into dir.
func NewRecorder(upstream *url.URL, dir string) *Recorder {
	r := &Recorder{Dir: dir}
	r.proxy = httputil.NewSingleHostReverseProxy(upstream)
	direct := r.proxy.Director
	r.proxy.Director = func(req *http.Request) {
		direct(req)
		// The proxy's own transport then asks for gzip and decodes it, so
		// the tape keeps plain bodies (a large message list comes
		// compressed otherwise).
		req.Header.Del("Accept-Encoding")
	}
	r.proxy.FlushInterval = -1
	r.proxy.ModifyResponse = r.capture
	r.proxy.ErrorLog = log.New(io.Discard, "", 0) // a restarting server refuses connects: expected
	return r
}

// ServeHTTP forwards the request and records the answer.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.proxy.ServeHTTP(w, req) }

// capture tees the response body into the tape.
func (r *Recorder) capture(resp *http.Response) error {
	req := resp.Request
	if req.Method != http.MethodGet {
		return nil // the bridge only reads; a driver's writes are not part of the tape
	}
	x := Exchange{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, Type: resp.Header.Get("Content-Type")}
	if isStream(req.URL.Path) && resp.StatusCode != http.StatusOK {
		return nil // a refused stream leaves nothing to replay
	}
	if isStream(req.URL.Path) {
		r.mu.Lock()
		r.n++
		x.File = fmt.Sprintf("stream-%d.sse", r.n)
		r.ex = append(r.ex, x)
		sf := &streamFile{x: &r.ex[len(r.ex)-1]}
		r.open = append(r.open, sf)
		r.mu.Unlock()
		resp.Body = teeBody{ReadCloser: resp.Body, sf: sf}
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	defer r.mu.Unlock()
	if !json.Valid(body) {
		r.bad = append(r.bad, fmt.Sprintf("%s %s: the answer is not JSON", req.Method, req.URL.Path))
		return nil
	}
	x.Body = json.RawMessage(r.rewrite(body))
	r.ex = append(r.ex, x)
	return nil
}

func (r *Recorder) rewrite(b []byte) []byte {
	if r.Rewrite == nil {
		return b
	}
	return r.Rewrite(b)
}

type teeBody struct {
	io.ReadCloser
	sf *streamFile
}

func (t teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.sf.mu.Lock()
	t.sf.buf.Write(p[:n])
	t.sf.mu.Unlock()
	return n, err
}

// Save writes the tape (with the streams read so far) into Dir.
func (r *Recorder) Save(t Tape) error {
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bad) > 0 {
		return fmt.Errorf("recorder: %s", strings.Join(r.bad, "; "))
	}
	for i, sf := range r.open {
		sf.mu.Lock()
		data := r.rewrite(sf.buf.Bytes())
		sf.mu.Unlock()
		if err := os.WriteFile(filepath.Join(r.Dir, fmt.Sprintf("stream-%d.sse", i+1)), data, 0o644); err != nil {
			return err
		}
	}
	t.Exchanges = append([]Exchange(nil), r.ex...)
	b, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(r.Dir, TapeFile), append(b, '\n'), 0o644)
}
