package otlp

import (
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Receiver turns OTLP log exports into AEP events. One Receiver serves both
// transports; it is safe for concurrent use.
type Receiver struct {
	cfg     Config
	em      *shim.Emitter
	errs    *shim.ErrorLog
	vendors []mapping.Vendor // the OTLP tables, registry order
	fixed   *mapping.Vendor  // the configured vendor; nil picks per resource
	seen    *dedupe
	sem     chan struct{}
	// buffered counts the request body bytes held while they arrive
	// (bounded by Config.MaxBuffered).
	buffered atomic.Int64
	stats    counters
}

// counters are the receiver's running totals.
type counters struct {
	requests, records, duplicates, rejected, failed  atomic.Int64
	busy, badRequests, ignoredTraces, ignoredMetrics atomic.Int64
	uploading                                        atomic.Int64
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
	Uploading      int64 `json:"uploading"`       // log export bodies arriving now
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
	r := &Receiver{
		cfg:     cfg,
		em:      em,
		errs:    errs,
		vendors: otlpVendors(),
		seen:    newDedupe(cfg.DedupeWindow),
		sem:     make(chan struct{}, cfg.MaxConcurrent),
	}
	// The channel tables emit as the agents the design record pins
	// (Vendor.Agent), so they share the hook adapter's session log and its
	// per-session lock; --vendor names them by that agent.
	if len(r.vendors) == 0 {
		return nil, errors.New("otlp: no OTLP tables in the registry")
	}
	for i, v := range r.vendors {
		if cfg.Vendor == v.AgentName() {
			r.fixed = &r.vendors[i]
		}
	}
	return r, nil
}

// Stats returns the current counters.
func (r *Receiver) Stats() Stats {
	c := &r.stats
	return Stats{
		Requests: c.requests.Load(), Records: c.records.Load(), Duplicates: c.duplicates.Load(),
		Rejected: c.rejected.Load(), Failed: c.failed.Load(), Busy: c.busy.Load(),
		BadRequests: c.badRequests.Load(), IgnoredTraces: c.ignoredTraces.Load(),
		IgnoredMetrics: c.ignoredMetrics.Load(), Uploading: c.uploading.Load(),
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
// the emitter as one batch (shim.Emitter.HandleBatchCounts), which emits each
// session's records in request order under one hold of the session's lock.
// It returns how many records were refused permanently (unreadable), and a
// non-nil error when an emission failed: the caller answers with a
// retryable status, and the records already emitted are dropped as
// duplicates when the exporter retries.
func (r *Receiver) ConsumeLogs(ld plog.Logs) (rejected int64, err error) {
	k := &keyer{}
	rls := ld.ResourceLogs()
	return r.consume(rls.Len(), func(i int) (map[string]any, []flatRecord) {
		return flattenResource(rls.At(i), k)
	})
}

// consumeFlat is ConsumeLogs for resources the fast path decoded
// (decodeWire).
func (r *Receiver) consumeFlat(frs []flatResource) (rejected int64, err error) {
	return r.consume(len(frs), func(i int) (map[string]any, []flatRecord) { return frs[i].res, frs[i].recs })
}

// consume emits the records of n resources, resource(i) giving the i-th
// decoded; see ConsumeLogs.
func (r *Receiver) consume(n int, resource func(i int) (map[string]any, []flatRecord)) (rejected int64, err error) {
	r.stats.requests.Add(1)
	defer func() { r.stats.rejected.Add(rejected) }()
	sessions := map[[2]string]struct{}{} // the (agent, session) pairs this request writes to
	var last [2]string                   // the pair admitted last: most records follow one of their session
	capped := 0
	defer func() {
		if capped > 0 {
			r.record("map", "", fmt.Errorf("%d records refused: one request may write to %d sessions", capped, r.cfg.MaxSessions))
		}
	}()
	for i := range n {
		res, recs := resource(i)
		v := r.pick(res, recs)
		batch := make([]pending, 0, len(recs))
		for _, fr := range recs {
			if fr.err != nil {
				r.record("map", "", fr.err)
				rejected++
				continue
			}
			hook, ok := r.admit(sessions, &last, v, fr.rec)
			if !ok {
				capped++
				rejected++
				continue
			}
			if !r.seen.reserve(fr.key) {
				r.stats.duplicates.Add(1)
				continue
			}
			batch = append(batch, pending{rec: fr.rec, key: fr.key, hook: hook})
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

// admit reports whether a record's session may be written by this request:
// one already written to, or a new one while the request has written to
// fewer than MaxSessions. It returns the record's name as the table
// identifies it, for its moment. last is the pair admitted last, which
// needs no lookup.
func (r *Receiver) admit(sessions map[[2]string]struct{}, last *[2]string, v mapping.Vendor, rec *mapping.OTelRecord) (hook string, ok bool) {
	session := mapping.UnknownSession
	if v.Identify != nil {
		var s string
		if hook, s = v.Identify(recordMoment(rec)); s != "" {
			session = s
		}
	}
	key := [2]string{v.AgentName(), session}
	if key == *last {
		return hook, true
	}
	if _, ok := sessions[key]; !ok {
		if len(sessions) >= r.cfg.MaxSessions {
			return hook, false
		}
		sessions[key] = struct{}{}
	}
	*last = key
	return hook, true
}

// emitBatch emits one resource's records through the emitter's batch path
// and settles their dedupe keys: an unreadable record keeps its key (a retry
// cannot succeed), a record that failed to emit releases it so the
// exporter's retry is written.
func (r *Receiver) emitBatch(v mapping.Vendor, batch []pending) (rejected int64, err error) {
	if len(batch) == 0 {
		return 0, nil
	}
	pooled := getMoments(len(batch))
	defer putMoments(pooled)
	ms := *pooled
	// The nonces, each a record key's first 8 bytes in hex, cut from one
	// string for the batch (its bytes never written again).
	const nonceLen = 16
	hexes := make([]byte, nonceLen*len(batch))
	for i, p := range batch {
		hex.Encode(hexes[nonceLen*i:], p.key[:8])
	}
	nonces := unsafe.String(unsafe.SliceData(hexes), len(hexes))
	for i, p := range batch {
		ms[i] = recordMoment(p.rec)
		ms[i].Hook = p.hook // as the emitter would name it: no copy of the batch there
		ms[i].Nonce = nonces[nonceLen*i : nonceLen*(i+1)]
		ms[i].Mode = r.cfg.Mode
	}
	results, batchErr := r.em.HandleBatchCounts(v, ms)
	var emitted, failed int64
	for i, res := range results {
		switch {
		case res.Err == nil:
			emitted++
		case errors.Is(res.Err, mapping.ErrOTelRecord):
			r.record("map", res.Hook, res.Err)
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
		r.record("write", "", batchErr)
		return rejected, fmt.Errorf("%w: %s records: %w", errEmit, v.Name, batchErr)
	}
	return rejected, nil
}

// momentPool recycles the moments emitBatch hands the emitter: a batch's
// moments are garbage once HandleBatch returns (the emitter keeps nothing
// of them but what it copies), and a request's hundred of them is a tenth
// of what the request allocates. Only slices up to maxPooledMoments are
// kept, so the pool holds little beyond what typical requests need.
var momentPool = sync.Pool{New: func() any { return new([]mapping.Moment) }}

const maxPooledMoments = 1024

// getMoments is room for n moments, every one to be set by the caller.
func getMoments(n int) *[]mapping.Moment {
	p := momentPool.Get().(*[]mapping.Moment)
	if cap(*p) < n {
		*p = make([]mapping.Moment, n)
	}
	*p = (*p)[:n]
	return p
}

// putMoments gives the moments back to the pool, cleared first: a pooled
// slice must not keep a request's records alive.
func putMoments(p *[]mapping.Moment) {
	if cap(*p) > maxPooledMoments {
		return
	}
	clear(*p)
	momentPool.Put(p)
}

// pending is one decoded record waiting for its session's batch.
type pending struct {
	rec  *mapping.OTelRecord
	key  recordKey
	hook string // its name, as the table identifies it
}

// record notes an internal failure, without content.
func (r *Receiver) record(stage, hook string, err error) {
	if r.errs == nil {
		return
	}
	r.errs.Record(shim.Failure{Adapter: "otel", Hook: hook, Stage: stage, Error: err.Error()})
}

// pick chooses the table for one resource: the configured vendor, or the
// one the registry's Detect rules claim it for (see mapping.Match): a
// strong match on the resource, else the first record any vendor matches,
// strong before weak, else a weak match on the resource, else the default
// profile's fallback (else the first table). Ties go to the earlier table in the registry.
func (r *Receiver) pick(res map[string]any, recs []flatRecord) mapping.Vendor {
	if r.fixed != nil {
		return *r.fixed
	}
	best := func(rec *mapping.OTelRecord, min mapping.Match) (mapping.Vendor, bool) {
		var pick mapping.Vendor
		top := mapping.NoMatch
		for _, v := range r.vendors {
			if m := v.Detect(res, rec); m > top {
				pick, top = v, m
			}
		}
		return pick, top >= min
	}
	if v, ok := best(nil, mapping.MatchStrong); ok {
		return v
	}
	for _, fr := range recs {
		if fr.rec != nil {
			if v, ok := best(fr.rec, mapping.MatchWeak); ok {
				return v
			}
		}
	}
	if v, ok := best(nil, mapping.MatchFallback); ok {
		return v
	}
	return r.vendors[0]
}

// otlpVendors are the registry's OTLP tables.
func otlpVendors() []mapping.Vendor {
	var out []mapping.Vendor
	for _, v := range mapping.Vendors() {
		if v.Transport == mapping.TransportOTLP && v.Detect != nil {
			out = append(out, v)
		}
	}
	return out
}

// VendorNames are the values Config.Vendor takes: auto and the agent of
// every OTLP table.
func VendorNames() []string {
	out := []string{VendorAuto}
	for _, v := range otlpVendors() {
		out = append(out, v.AgentName())
	}
	return out
}
