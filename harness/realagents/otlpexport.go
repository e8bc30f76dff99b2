package realagents

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/aep-hook/aep-hook/harness/truth"
)

// An OTLP channel (Codex's [otel] log export to `aep-hook otel`) is
// recorded as the export requests the agent really sent: a recording proxy
// on 127.0.0.1 takes each request, saves it, and passes it on to the real
// sidecar, whose answer goes back to the agent. The agent's hooks may be
// registered beside it; then each export notes how many hook firings had
// started before it arrived, so a replay interleaves the two channels as
// they were.

// Export is one recorded OTLP/HTTP export request.
type Export struct {
	// N numbers the exports of a scenario from 1, in arrival order.
	N int `json:"n"`
	// AfterFiring is how many hook firings had started when the export
	// arrived: a replay posts it after replaying that many.
	AfterFiring int `json:"after_firing"`
	// Path is the request path (/v1/logs, /v1/traces, /v1/metrics).
	Path string `json:"path"`
	// ContentType and ContentEncoding are the request's headers.
	ContentType     string `json:"content_type"`
	ContentEncoding string `json:"content_encoding,omitempty"`
	// JSON is an OTLP/JSON body (rewritten, compacted); Proto a protobuf
	// body, base64 (its strings rewritten, then encoded again).
	JSON  json.RawMessage `json:"json,omitempty"`
	Proto string          `json:"proto,omitempty"`
}

// Body returns the bytes a replay posts.
func (e Export) Body() ([]byte, error) {
	if e.Proto != "" {
		return base64.StdEncoding.DecodeString(e.Proto)
	}
	return e.JSON, nil
}

// OTelChannel says how a scenario records an OTLP channel and how its
// recording is replayed.
type OTelChannel struct {
	// Protocol is the agent's exporter protocol: "json" or "binary".
	Protocol string `json:"protocol"`
	// Prompts says the agent exported prompt text (Codex log_user_prompt).
	Prompts bool `json:"prompts,omitempty"`
	// Hooks says the hook channel was registered beside the sidecar.
	Hooks bool `json:"hooks,omitempty"`
	// Replays are the sidecar configurations the recording is replayed
	// through, each held to its own facts. The recording itself runs the
	// first one's mode.
	Replays []OTelReplay `json:"replays"`
}

// OTelReplay is one configuration a recorded OTLP channel is replayed
// through.
type OTelReplay struct {
	// Name names the configuration in messages ("primary", "companion+hooks").
	Name string `json:"name"`
	// Mode is the sidecar's --mode.
	Mode string `json:"mode"`
	// Hooks replays the recorded hook firings beside the exports.
	Hooks bool `json:"hooks,omitempty"`
	// Capture, when set, is the sidecar's (and the hooks') --capture.
	Capture string `json:"capture,omitempty"`
	// Absent are strings no event of the record may hold (content the
	// ceiling holds back).
	Absent []string `json:"absent,omitempty"`
	// Count, when set, is how many events of a type the record must hold:
	// "type", or "type?member=value" for those whose data member (a dotted
	// path) has that value.
	Count map[string]int `json:"count,omitempty"`
	// Carry names data members (dotted paths) every event of a type must
	// carry.
	Carry map[string][]string `json:"carry,omitempty"`
	// Facts are what the record of this configuration must tell.
	Facts truth.Facts `json:"facts"`
}

// exportsFile is the OTLP fixture inside a scenario folder.
const exportsFile = "otlp.jsonl"

// sidecar is a running `aep-hook otel` process.
type sidecar struct {
	cmd   *exec.Cmd
	URL   string // http://127.0.0.1:PORT
	Token string // the bearer token it requires (its home's per-user token)
	errb  *syncBuffer
	done  chan error
}

// syncBuffer is a bytes.Buffer safe for a process's writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// sidecarAddr finds the address the sidecar says it serves.
var sidecarAddr = regexp.MustCompile(`http://(127\.0\.0\.1:[0-9]+)/v1/logs`)

// startSidecar starts `bin otel` on an ephemeral loopback port with env
// and the extra flags, and waits until it says where it listens.
func startSidecar(bin string, env []string, flags ...string) (*sidecar, error) {
	args := append([]string{"otel", "--listen", "127.0.0.1:0"}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	pr, pw := io.Pipe()
	s := &sidecar{cmd: cmd, errb: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = io.MultiWriter(s.errb, pw)
	var out syncBuffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start aep-hook otel: %w", err)
	}
	go func() { s.done <- cmd.Wait(); pw.Close() }()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := sidecarAddr.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case addr := <-found:
		s.URL = "http://" + addr
		// The sidecar made its home's token before it listened.
		for _, kv := range env {
			if home, ok := strings.CutPrefix(kv, "AEP_HOME="); ok {
				if b, err := os.ReadFile(filepath.Join(home, "token")); err == nil {
					s.Token = strings.TrimSpace(string(b))
				}
			}
		}
		return s, nil
	case err := <-s.done:
		return nil, fmt.Errorf("aep-hook otel exited before listening: %v: %s", err, s.errb.String())
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("aep-hook otel did not say where it listens within 30s: %s", s.errb.String())
	}
}

// stop ends the sidecar with SIGTERM (it drains in-flight requests) and
// returns what it wrote on stderr.
func (s *sidecar) stop() (string, error) {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		return s.errb.String(), err
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		return s.errb.String(), errors.New("aep-hook otel did not stop within 30s of SIGTERM")
	}
}

// rawExport is an export as the recording proxy saves it.
type rawExport struct {
	At              int64  `json:"at_ns"`
	Path            string `json:"path"`
	ContentType     string `json:"content_type"`
	ContentEncoding string `json:"content_encoding,omitempty"`
	Body            []byte `json:"body"`
	Status          int    `json:"status"`
}

// otlpProxy is the recording proxy between the agent's exporter and the
// sidecar.
type otlpProxy struct {
	dir, upstream string
	srv           *http.Server
	ln            net.Listener
	mu            sync.Mutex
	n             int
}

// startOTLPProxy listens on an ephemeral loopback port, saving each
// request under dir/otlp/ and passing it on to upstream.
func startOTLPProxy(dir, upstream string) (*otlpProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &otlpProxy{dir: filepath.Join(dir, "otlp"), upstream: upstream, ln: ln}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		ln.Close()
		return nil, err
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

// URL is where the agent exports to.
func (p *otlpProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *otlpProxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := time.Now().UnixNano()
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	up, err := http.NewRequest(req.Method, p.upstream+req.URL.Path, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for _, h := range []string{"Content-Type", "Content-Encoding", "Authorization"} {
		if v := req.Header.Get(h); v != "" {
			up.Header.Set(h, v)
		}
	}
	resp, err := http.DefaultClient.Do(up)
	status := http.StatusBadGateway
	var rbody []byte
	if err == nil {
		status = resp.StatusCode
		rbody, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
	}
	p.mu.Lock()
	p.n++
	n := p.n
	p.mu.Unlock()
	saveJSON(filepath.Join(p.dir, fmt.Sprintf("%020d-%04d.json", at, n)), rawExport{
		At: at, Path: req.URL.Path, ContentType: req.Header.Get("Content-Type"),
		ContentEncoding: req.Header.Get("Content-Encoding"), Body: body, Status: status,
	})
	w.WriteHeader(status)
	w.Write(rbody)
}

// close waits for the requests in flight, then stops.
func (p *otlpProxy) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.srv.Shutdown(ctx)
}

// collectExports reads the proxy's saved requests in dir/otlp, in arrival
// order, rewrites machine strings and numbers each by the firings fs had
// started before it (firing start times in dir/firings).
func collectExports(dir string, rw *Rewriter) ([]Export, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "otlp", "*.json"))
	if err != nil || len(paths) == 0 {
		return nil, err
	}
	sort.Strings(paths)
	starts, err := firingStarts(dir)
	if err != nil {
		return nil, err
	}
	var out []Export
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var re rawExport
		if err := json.Unmarshal(b, &re); err != nil {
			return nil, fmt.Errorf("export %s: %w", p, err)
		}
		if re.Status != http.StatusOK {
			return nil, fmt.Errorf("export %s: the sidecar answered %d", p, re.Status)
		}
		e := Export{N: len(out) + 1, Path: re.Path, ContentType: re.ContentType, ContentEncoding: re.ContentEncoding}
		e.AfterFiring = sort.Search(len(starts), func(i int) bool { return starts[i] >= re.At })
		if e.JSON, e.Proto, err = rewriteExport(re, rw); err != nil {
			return nil, fmt.Errorf("export %s: %w", p, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// firingStarts are the start times of the recorded firings, sorted (the
// order collectFirings numbers them in).
func firingStarts(dir string) ([]int64, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "firings", "*.json"))
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var rf rawFiring
		if json.Unmarshal(b, &rf) != nil || len(rf.Stdin) == 0 && rf.Signal != "" {
			continue // as collectFirings skips it
		}
		out = append(out, rf.Start)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// rewriteExport rewrites the machine strings of an export body: a JSON
// body textually, a protobuf body value by value (decoded, rewritten,
// encoded again; byte-exact when it holds no machine string).
func rewriteExport(re rawExport, rw *Rewriter) (json.RawMessage, string, error) {
	if re.ContentEncoding != "" {
		return nil, "", fmt.Errorf("content encoding %q not kept", re.ContentEncoding)
	}
	if strings.Contains(re.ContentType, "json") {
		j := rw.JSON(re.Body)
		if j == nil {
			return nil, "", errors.New("a JSON export that is not JSON")
		}
		return j, "", nil
	}
	if !rw.Touches(string(re.Body)) {
		return nil, base64.StdEncoding.EncodeToString(re.Body), nil
	}
	ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(re.Body)
	if err != nil {
		return nil, "", fmt.Errorf("protobuf logs: %w", err)
	}
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		rewriteMap(rl.Resource().Attributes(), rw)
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				rewriteMap(lr.Attributes(), rw)
				rewriteValue(lr.Body(), rw)
			}
		}
	}
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		return nil, "", err
	}
	return nil, base64.StdEncoding.EncodeToString(b), nil
}

func rewriteMap(m pcommon.Map, rw *Rewriter) {
	for _, v := range m.All() {
		rewriteValue(v, rw)
	}
}

func rewriteValue(v pcommon.Value, rw *Rewriter) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		if s := rw.String(v.Str()); s != v.Str() {
			v.SetStr(s)
		}
	case pcommon.ValueTypeMap:
		rewriteMap(v.Map(), rw)
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			rewriteValue(s.At(i), rw)
		}
	}
}

// ReadExports reads Exports from path; a missing file holds none.
func ReadExports(path string) ([]Export, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Export
	for n, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var e Export
		if err := json.Unmarshal(l, &e); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// WriteExports writes exports to path, one JSON object a line.
func WriteExports(path string, es []Export) error {
	var buf bytes.Buffer
	for _, e := range es {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
