package otlp

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
)

// The OTLP/HTTP paths (OTLP specification, "OTLP/HTTP").
const (
	PathLogs    = "/v1/logs"
	PathTraces  = "/v1/traces"
	PathMetrics = "/v1/metrics"
	PathHealth  = "/healthz"
)

// Media types of OTLP/HTTP bodies.
const (
	typeProto = "application/x-protobuf"
	typeJSON  = "application/json"
)

// Handler returns the OTLP/HTTP handler: /v1/logs, /v1/traces and
// /v1/metrics (accepted and ignored) and /healthz.
func (r *Receiver) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(PathLogs, r.handleLogs)
	mux.HandleFunc(PathTraces, r.handleIgnored("rejectedSpans", &r.stats.ignoredTraces))
	mux.HandleFunc(PathMetrics, r.handleIgnored("rejectedDataPoints", &r.stats.ignoredMetrics))
	mux.HandleFunc(PathHealth, r.handleHealth)
	return mux
}

// bufPool recycles request body buffers.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// copyPool recycles the buffers bodies are copied through (io.Copy would
// allocate one per request).
var copyPool = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// handleLogs serves POST /v1/logs. The body is read first, into memory
// counted against MaxBuffered and within BodyTimeout, and only then does the
// request take one of the MaxConcurrent slots to be decoded and emitted: a
// slow upload holds neither a slot nor more memory than it has sent.
func (r *Receiver) handleLogs(w http.ResponseWriter, req *http.Request) {
	asJSON, ok := r.precheck(w, req)
	if !ok {
		return
	}
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= int(r.cfg.MaxRequestBytes) {
			buf.Reset()
			bufPool.Put(buf)
		}
	}()
	buf.Reset()
	held := &heldBody{buf: buf, r: r}
	defer held.release()
	r.stats.uploading.Add(1)
	status, err := r.readBody(w, req, held)
	r.stats.uploading.Add(-1)
	if err != nil {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		r.fail(w, asJSON, status, codeFor(status), err.Error())
		return
	}
	if !r.acquire() {
		w.Header().Set("Retry-After", "1")
		r.fail(w, asJSON, http.StatusServiceUnavailable, codeUnavailable, "receiver busy: too many concurrent requests")
		return
	}
	defer r.release()
	var rejected int64
	// Protobuf goes the fast path where it covers the request (decodeWire);
	// pdata decodes the rest, and says what an undecodable body is.
	var frs []flatResource
	werr := errSlowPath
	if !asJSON {
		sc := getScratch()
		defer sc.release() // after the records are emitted: nothing reads them then
		frs, werr = decodeWireIn(buf.Bytes(), &sc.k, sc)
	}
	if werr == nil {
		rejected, err = r.consumeFlat(frs)
	} else {
		var ld plog.Logs
		if asJSON {
			ld, err = (&plog.JSONUnmarshaler{}).UnmarshalLogs(buf.Bytes())
		} else {
			ld, err = (&plog.ProtoUnmarshaler{}).UnmarshalLogs(buf.Bytes())
		}
		if err != nil {
			r.fail(w, asJSON, http.StatusBadRequest, codeInvalidArgument, "undecodable ExportLogsServiceRequest: "+err.Error())
			return
		}
		rejected, err = r.ConsumeLogs(ld)
	}
	if err != nil {
		w.Header().Set("Retry-After", "1")
		r.fail(w, asJSON, http.StatusServiceUnavailable, codeUnavailable, "could not record the events; retry")
		return
	}
	msg := ""
	if rejected > 0 {
		msg = fmt.Sprintf("log records refused: unreadable, or of sessions beyond the %d one request may write to", r.cfg.MaxSessions)
	}
	write(w, asJSON, http.StatusOK, exportResponse(asJSON, "rejectedLogRecords", rejected, msg))
}

// handleIgnored serves /v1/traces and /v1/metrics: a well-formed request is
// read (bounded), counted and answered with success.
func (r *Receiver) handleIgnored(rejectedKey string, n interface{ Add(int64) int64 }) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		asJSON, ok := r.precheck(w, req)
		if !ok {
			return
		}
		if status, err := r.readBody(w, req, io.Discard); err != nil {
			r.fail(w, asJSON, status, codeFor(status), err.Error())
			return
		}
		n.Add(1)
		write(w, asJSON, http.StatusOK, exportResponse(asJSON, rejectedKey, 0, ""))
	}
}

// handleHealth serves /healthz: 200 with the counters.
func (r *Receiver) handleHealth(w http.ResponseWriter, _ *http.Request) {
	b, _ := json.Marshal(struct {
		Status string `json:"status"`
		Stats
	}{"ok", r.Stats()})
	w.Header().Set("Content-Type", typeJSON)
	w.WriteHeader(http.StatusOK)
	w.Write(append(b, '\n'))
}

// precheck enforces POST and a known content type; it answers the request
// itself when either fails.
func (r *Receiver) precheck(w http.ResponseWriter, req *http.Request) (asJSON, ok bool) {
	mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	asJSON = mt == typeJSON
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		r.fail(w, asJSON, http.StatusMethodNotAllowed, codeUnimplemented, "method "+req.Method+" not allowed; use POST")
		return asJSON, false
	}
	if mt != typeJSON && mt != typeProto {
		r.fail(w, true, http.StatusUnsupportedMediaType, codeInvalidArgument,
			fmt.Sprintf("unsupported content type %q; use %s or %s", mt, typeProto, typeJSON))
		return asJSON, false
	}
	return asJSON, true
}

// errTooLarge reports a body above the size limit.
var errTooLarge = errors.New("request body too large")

// errBuffered reports bodies in flight holding all the memory allowed.
var errBuffered = errors.New("receiver busy: too many request bodies arriving")

// heldBody is a request body being read into buf, its bytes counted
// against the receiver's MaxBuffered until release.
type heldBody struct {
	buf  *bytes.Buffer
	r    *Receiver
	held int64
}

func (h *heldBody) Write(p []byte) (int, error) {
	n := int64(len(p))
	if h.r.buffered.Add(n) > h.r.cfg.MaxBuffered {
		h.r.buffered.Add(-n)
		return 0, errBuffered
	}
	h.held += n
	return h.buf.Write(p)
}

func (h *heldBody) release() {
	h.r.buffered.Add(-h.held)
	h.held = 0
}

// readBody copies the request body, decompressed, into dst, bounded by
// MaxRequestBytes on both the wire and the decompressed size (a gzip bomb
// stops at the bound). It returns the HTTP status to answer with on error.
func (r *Receiver) readBody(w http.ResponseWriter, req *http.Request, dst io.Writer) (int, error) {
	limit := r.cfg.MaxRequestBytes
	if req.ContentLength > limit {
		return http.StatusRequestEntityTooLarge, fmt.Errorf("%w: %d bytes, limit %d", errTooLarge, req.ContentLength, limit)
	}
	// The server's read timeout is for whole connections; one body gets
	// BodyTimeout (where the server allows setting it).
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(r.cfg.BodyTimeout))
	var body io.Reader = http.MaxBytesReader(w, req.Body, limit)
	switch enc := req.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return statusForRead(err), fmt.Errorf("gzip body: %w", err)
		}
		defer zr.Close()
		body = zr
	default:
		return http.StatusUnsupportedMediaType, fmt.Errorf("unsupported content encoding %q; use gzip or none", enc)
	}
	cb := copyPool.Get().(*[32 << 10]byte)
	n, err := io.CopyBuffer(dst, io.LimitReader(body, limit+1), cb[:])
	copyPool.Put(cb)
	if errors.Is(err, errBuffered) {
		return http.StatusServiceUnavailable, err
	}
	if err != nil {
		return statusForRead(err), fmt.Errorf("read body: %w", err)
	}
	if n > limit {
		return http.StatusRequestEntityTooLarge, fmt.Errorf("%w: above %d bytes decompressed", errTooLarge, limit)
	}
	return http.StatusOK, nil
}

// statusForRead maps a body read error to a status: 413 when the wire
// bound tripped, 503 (retryable) when the body did not arrive in time,
// else 400.
func statusForRead(err error) int {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		return http.StatusServiceUnavailable // retryable: the exporter sends it again
	}
	return http.StatusBadRequest
}

// codeFor is the google.rpc code an HTTP error status carries.
func codeFor(status int) int32 {
	switch status {
	case http.StatusRequestEntityTooLarge:
		return codeResourceExhausted
	case http.StatusServiceUnavailable:
		return codeUnavailable
	}
	return codeInvalidArgument
}

// fail answers with an OTLP error: the status and a google.rpc.Status body.
func (r *Receiver) fail(w http.ResponseWriter, asJSON bool, status int, code int32, msg string) {
	if status != http.StatusServiceUnavailable {
		r.stats.badRequests.Add(1)
	}
	write(w, asJSON, status, rpcStatus(asJSON, code, msg))
}

// write sends body with the content type matching the request's.
func write(w http.ResponseWriter, asJSON bool, status int, body []byte) {
	ct := typeProto
	if asJSON {
		ct = typeJSON
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
