package otlp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Receiver turns OTLP log exports into AEP events. One Receiver serves both
// transports; it is safe for concurrent use.
type Receiver struct {
	cfg    Config
	em     *shim.Emitter
	errs   *shim.ErrorLog
	codex  mapping.Vendor
	vscode mapping.Vendor
	seen   *dedupe
	sem    chan struct{}
	stats  counters
}

// counters are the receiver's running totals.
type counters struct {
	requests, records, duplicates, rejected, failed  atomic.Int64
	busy, badRequests, ignoredTraces, ignoredMetrics atomic.Int64
}

// Stats is a snapshot of the receiver's counters (served on /healthz).
type Stats struct {
	Requests       int64 `json:"requests"`        // log export requests decoded
	Records        int64 `json:"records"`         // log records emitted
	Duplicates     int64 `json:"duplicates"`      // records dropped as exporter retries
	Rejected       int64 `json:"rejected"`        // records refused permanently
	Failed         int64 `json:"failed"`          // records whose emission failed (retryable)
	Busy           int64 `json:"busy"`            // requests refused at the concurrency bound
	BadRequests    int64 `json:"bad_requests"`    // undecodable, oversized or unsupported requests
	IgnoredTraces  int64 `json:"ignored_traces"`  // trace export requests accepted and ignored
	IgnoredMetrics int64 `json:"ignored_metrics"` // metric export requests accepted and ignored
}

// New returns a receiver emitting through em; errs (may be nil) records
// internal failures without content.
func New(cfg Config, em *shim.Emitter, errs *shim.ErrorLog) (*Receiver, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if em == nil {
		return nil, errors.New("otlp: no emitter")
	}
	// The channel tables emit as the agents the design record pins (agent
	// codex / vscode, Vendor.Agent), so they share the hook adapter's session
	// log and its per-session lock.
	codex, vscode := mapping.CodexOtel(), mapping.VSCodeOtel()
	return &Receiver{
		cfg:    cfg,
		em:     em,
		errs:   errs,
		codex:  codex,
		vscode: vscode,
		seen:   newDedupe(cfg.DedupeWindow),
		sem:    make(chan struct{}, cfg.MaxConcurrent),
	}, nil
}

// Stats returns the current counters.
func (r *Receiver) Stats() Stats {
	c := &r.stats
	return Stats{
		Requests: c.requests.Load(), Records: c.records.Load(), Duplicates: c.duplicates.Load(),
		Rejected: c.rejected.Load(), Failed: c.failed.Load(), Busy: c.busy.Load(),
		BadRequests: c.badRequests.Load(), IgnoredTraces: c.ignoredTraces.Load(),
		IgnoredMetrics: c.ignoredMetrics.Load(),
	}
}

// acquire takes a concurrency slot without waiting.
func (r *Receiver) acquire() bool {
	select {
	case r.sem <- struct{}{}:
		return true
	default:
		r.stats.busy.Add(1)
		return false
	}
}

func (r *Receiver) release() { <-r.sem }

// errEmit marks a retryable emission failure (the disk, the state store).
var errEmit = errors.New("emit")

// ConsumeLogs emits every record of ld. The records of each resource go to
// the emitter as one batch (shim.Emitter.HandleBatch), which emits each
// session's records in request order under one hold of the session's lock.
// It returns how many records were refused permanently (unreadable), and a
// non-nil error when an emission failed: the caller answers with a
// retryable status, and the records already emitted are dropped as
// duplicates when the exporter retries.
func (r *Receiver) ConsumeLogs(ld plog.Logs) (rejected int64, err error) {
	r.stats.requests.Add(1)
	defer func() { r.stats.rejected.Add(rejected) }()
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes().AsRaw()
		v := r.pick(res, rl)
		var batch []pending
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			lrs := sl.LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				raw, err := json.Marshal(mapping.NewOTelRecord(res, sl.Scope(), lrs.At(k)))
				if err != nil {
					rejected++
					continue
				}
				sum := sha256.Sum256(raw)
				var key recordKey
				copy(key[:], sum[:])
				if !r.seen.reserve(key) {
					r.stats.duplicates.Add(1)
					continue
				}
				batch = append(batch, pending{raw: raw, key: key})
			}
		}
		rej, err := r.emitBatch(v, batch)
		rejected += rej
		if err != nil {
			// Later resources were not reserved yet: the retry writes them.
			return rejected, err
		}
	}
	return rejected, nil
}

// emitBatch emits one resource's records through the emitter's batch path
// and settles their dedupe keys: an unreadable record keeps its key (a retry
// cannot succeed), a record that failed to emit releases it so the
// exporter's retry is written.
func (r *Receiver) emitBatch(v mapping.Vendor, batch []pending) (rejected int64, err error) {
	if len(batch) == 0 {
		return 0, nil
	}
	ms := make([]mapping.Moment, len(batch))
	for i, p := range batch {
		ms[i] = mapping.Moment{Raw: p.raw, Nonce: hex.EncodeToString(p.key[:8]), Mode: r.cfg.Mode}
	}
	results, batchErr := r.em.HandleBatch(v, ms)
	var emitted, failed int64
	for i, res := range results {
		switch {
		case res.Err == nil:
			emitted++
		case errors.Is(res.Err, mapping.ErrOTelRecord):
			r.record("map", res.Hook, res.Err, len(batch[i].raw))
			rejected++
		default:
			r.seen.release(batch[i].key)
			failed++
		}
	}
	r.stats.records.Add(emitted)
	r.stats.failed.Add(failed)
	if failed > 0 {
		if batchErr == nil {
			batchErr = errors.New("mapping failed")
		}
		r.record("write", "", batchErr, 0)
		return rejected, fmt.Errorf("%w: %s records: %w", errEmit, v.Name, batchErr)
	}
	return rejected, nil
}

// pending is one flattened record waiting for its session's batch.
type pending struct {
	raw []byte
	key recordKey
}

// record notes an internal failure, without content.
func (r *Receiver) record(stage, hook string, err error, n int) {
	if r.errs == nil {
		return
	}
	r.errs.Record(shim.Failure{Adapter: "otel", Hook: hook, Stage: stage, Error: err.Error(), Bytes: n})
}

// pick chooses the vendor table for one resource: the configured vendor, or
// under auto the one whose service.name or stamped attributes the resource
// carries. Records of no known vendor go to the Codex table (the design
// record's default profile), whose unknown rule takes them.
func (r *Receiver) pick(res map[string]any, rl plog.ResourceLogs) mapping.Vendor {
	switch r.cfg.Vendor {
	case VendorCodex:
		return r.codex
	case VendorVSCode:
		return r.vscode
	}
	if detectVendor(res, rl) == VendorVSCode {
		return r.vscode
	}
	return r.codex
}

// detectVendor names the vendor a resource belongs to: by service.name
// first, then by the first record's event.name family, then by the identity
// attribute each vendor stamps; "" when nothing matches.
func detectVendor(res map[string]any, rl plog.ResourceLogs) string {
	svc, _ := res["service.name"].(string)
	svc = strings.ToLower(svc)
	switch {
	case strings.HasPrefix(svc, "codex"):
		return VendorCodex
	case strings.Contains(svc, "copilot"):
		return VendorVSCode
	}
	sls := rl.ScopeLogs()
	for j := 0; j < sls.Len(); j++ {
		lrs := sls.At(j).LogRecords()
		for k := 0; k < lrs.Len(); k++ {
			attrs := lrs.At(k).Attributes()
			name := lrs.At(k).EventName()
			if v, ok := attrs.Get("event.name"); ok {
				name = v.AsString()
			}
			switch {
			case strings.HasPrefix(name, "codex."):
				return VendorCodex
			case strings.HasPrefix(name, "copilot_chat."):
				return VendorVSCode
			}
			if _, ok := attrs.Get("conversation.id"); ok {
				return VendorCodex
			}
		}
	}
	if _, ok := res["session.id"]; ok {
		return VendorVSCode
	}
	return ""
}
