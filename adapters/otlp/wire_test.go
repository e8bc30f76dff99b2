package otlp

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// pdataPath is what the receiver does without the fast path: pdata's
// decoding, then flattenResource per resource.
func pdataPath(body []byte) ([]flatResource, error) {
	ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(body)
	if err != nil {
		return nil, err
	}
	k := &keyer{}
	var out []flatResource
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		res, recs := flattenResource(rls.At(i), k)
		if _, err := rawMap(rls.At(i).Resource().Attributes()); err != nil {
			// Every record of the resource is refused, and nothing of it is
			// emitted; the map (read by vendor detection only) is whatever
			// rawMap had when it stopped: not compared.
			res = nil
		}
		out = append(out, flatResource{res: res, recs: recs})
	}
	return out, nil
}

// checkWire asserts the fast path's contract on body: where it decodes,
// pdata decodes too and flattens to the same resources, records, errors and
// keys; where pdata refuses, the fast path refuses.
func checkWire(t *testing.T, body []byte) (fast bool) {
	t.Helper()
	got, werr := decodeWire(body, &keyer{})
	want, perr := pdataPath(body)
	switch {
	case werr != nil && werr != errSlowPath:
		t.Fatalf("fast path error %v, want errSlowPath", werr)
	case werr != nil:
		return false
	case perr != nil:
		t.Fatalf("fast path decoded what pdata refuses (%v)", perr)
	}
	if len(got) != len(want) {
		t.Fatalf("%d resources, pdata %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if w.res != nil && !reflect.DeepEqual(g.res, w.res) {
			t.Fatalf("resource %d: %#v, pdata %#v", i, g.res, w.res)
		}
		if len(g.recs) != len(w.recs) {
			t.Fatalf("resource %d: %d records, pdata %d", i, len(g.recs), len(w.recs))
		}
		for j := range w.recs {
			gr, wr := g.recs[j], w.recs[j]
			if gr.key != wr.key || gr.err != wr.err || !reflect.DeepEqual(gr.rec, wr.rec) {
				t.Fatalf("resource %d record %d:\n fast  %x %v %#v\n pdata %x %v %#v", i, j, gr.key, gr.err, gr.rec, wr.key, wr.err, wr.rec)
			}
		}
	}
	return true
}

// randValue fills v with a random attribute value, nested up to depth.
func randValue(rng *rand.Rand, v pcommon.Value, depth int) {
	n := 9
	if depth <= 0 {
		n = 7
	}
	switch rng.IntN(n) {
	case 0:
		v.SetStr([]string{"", "x", "codex.tool_result", "héllo\x00\xff", "[REDACTED]"}[rng.IntN(5)])
	case 1:
		v.SetInt(int64(rng.Uint64()))
	case 2:
		v.SetDouble([]float64{0, -1.5, 1e300, math.NaN(), math.Inf(1), 3}[rng.IntN(6)])
	case 3:
		v.SetBool(rng.IntN(2) == 0)
	case 4:
		v.SetEmptyBytes().FromRaw([]byte("raw\x00bytes")[:rng.IntN(10)])
	case 5, 6: // empty
	case 7:
		s := v.SetEmptySlice()
		for range rng.IntN(4) {
			randValue(rng, s.AppendEmpty(), depth-1)
		}
	case 8:
		randMap(rng, v.SetEmptyMap(), depth-1)
	}
}

func randMap(rng *rand.Rand, m pcommon.Map, depth int) {
	for range rng.IntN(6) {
		randValue(rng, m.PutEmpty([]string{"a", "b", "event.name", "conversation.id", "host.name", "service.name", "k" + strconv.Itoa(rng.IntN(50))}[rng.IntN(7)]), depth)
	}
}

// randLogs is a random export request: resources, scopes and records with
// every field of the data model set or not.
func randLogs(rng *rand.Rand) plog.Logs {
	ld := plog.NewLogs()
	for range 1 + rng.IntN(3) {
		rl := ld.ResourceLogs().AppendEmpty()
		randMap(rng, rl.Resource().Attributes(), 2)
		if rng.IntN(3) == 0 {
			rl.Resource().SetDroppedAttributesCount(uint32(rng.IntN(3)))
			rl.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
		}
		for range rng.IntN(3) {
			sl := rl.ScopeLogs().AppendEmpty()
			if rng.IntN(2) == 0 {
				sl.Scope().SetName("codex_otel")
				sl.Scope().SetVersion([]string{"", "0.119.0"}[rng.IntN(2)])
				randMap(rng, sl.Scope().Attributes(), 1)
			}
			for range rng.IntN(4) {
				lr := sl.LogRecords().AppendEmpty()
				if rng.IntN(2) == 0 {
					lr.SetTimestamp(pcommon.Timestamp(rng.Uint64()))
				}
				lr.SetObservedTimestamp(pcommon.Timestamp(rng.Uint64() >> rng.IntN(64)))
				lr.SetSeverityNumber(plog.SeverityNumber(rng.IntN(25)))
				lr.SetSeverityText([]string{"", "INFO"}[rng.IntN(2)])
				lr.SetEventName([]string{"", "codex.sse_event"}[rng.IntN(2)])
				lr.SetDroppedAttributesCount(uint32(rng.IntN(2)))
				lr.SetFlags(plog.LogRecordFlags(rng.IntN(2)))
				if rng.IntN(2) == 0 {
					lr.SetTraceID(pcommon.TraceID([16]byte{1, byte(rng.IntN(3))}))
					lr.SetSpanID(pcommon.SpanID([8]byte{byte(rng.IntN(3))}))
				}
				randValue(rng, lr.Body(), 2)
				randMap(rng, lr.Attributes(), 3)
			}
		}
	}
	return ld
}

// TestWireMatchesPdata: on requests as exporters build them (random over
// every field and value type, NaN included) the fast path decodes, and to
// exactly what the pdata path gives.
func TestWireMatchesPdata(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	for i := range 2000 {
		body := protoBody(t, randLogs(rng))
		if !checkWire(t, body) {
			t.Fatalf("request %d left to pdata", i)
		}
	}
	// The benchmark's Codex requests.
	for _, body := range benchBodies(t, 2) {
		if !checkWire(t, body) {
			t.Fatal("a Codex request left to pdata")
		}
	}
}

// TestWireLeavesToPdata: what the fast path does not cover goes to pdata.
func TestWireLeavesToPdata(t *testing.T) {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Attributes().PutStr("a", "b")
	body := protoBody(t, ld)
	for name, b := range map[string][]byte{
		"unknown field":  append(append([]byte(nil), body...), 0x98, 0x06, 0x01), // field 99 varint
		"truncated":      body[:len(body)-1],
		"wrong wiretype": {0x08, 0x01},
	} {
		if _, err := decodeWire(b, &keyer{}); err != errSlowPath {
			t.Errorf("%s: %v, want errSlowPath", name, err)
		}
	}
}

// FuzzWireMatchesPdata holds the fast path to its contract on any bytes.
func FuzzWireMatchesPdata(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(protoBody(f, randLogs(rng)))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkWire(t, body)
	})
}

// FuzzKVParts holds kvParts's fast path to the general loop's reading of
// a KeyValue message: the same key and value, or the same refusal.
func FuzzKVParts(f *testing.F) {
	f.Add([]byte{0x0a, 0x01, 'k', 0x12, 0x03, 0x0a, 0x01, 'v'}) // key first (prost)
	f.Add([]byte{0x12, 0x03, 0x0a, 0x01, 'v', 0x0a, 0x01, 'k'}) // value first (pdata)
	f.Add([]byte{0x0a, 0x01, 'k', 0x0a, 0x01, 'k'})
	f.Add([]byte{0x12, 0x00, 0x12, 0x00})
	f.Add(append([]byte{0x0a, 0x01, 'k', 0x12, 0x83, 0x01, 0x0a, 0x80, 0x01}, make([]byte, 128)...)) // two-byte lengths
	f.Add([]byte{0x0a, 0x80, 0x00, 0x12, 0x00})                                                      // a length not written shortest
	f.Fuzz(func(t *testing.T, kv []byte) {
		key, val, ok := kvParts(kv)
		wkey, wval, wok := kvFieldLoop(kv)
		if ok != wok || string(key) != string(wkey) || string(val) != string(wval) {
			t.Fatalf("kvParts(%x) = %x %x %v, loop %x %x %v", kv, key, val, ok, wkey, wval, wok)
		}
	})
}

// TestWireKeyOrders: records whose keys repeat the previous record's in
// another order, or differ from them by one key, a missing one or a
// repeated one, key as pdata keys them (the fast path reuses the previous
// record's sort order when the keys are the same).
func TestWireKeyOrders(t *testing.T) {
	pool := []string{"a", "b", "event.name", "conversation.id", "call_id", "call_ie", "x", ""}
	kv := func(key, val string) []byte {
		return appendBytesField(appendBytesField(nil, 1, []byte(key)), 2, appendBytesField(nil, 1, []byte(val)))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for req := range 20 {
		var scope []byte
		keys := []string{"a", "b"}
		for i := range 100 {
			switch rng.IntN(5) {
			case 0: // the same keys, shuffled
				rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			case 1: // a random set
				keys = keys[:0]
				for _, k := range pool {
					if rng.IntN(2) == 0 {
						keys = append(keys, k)
					}
				}
			case 2: // one key repeated
				if len(keys) > 0 {
					keys = append(keys, keys[rng.IntN(len(keys))])
				}
			case 3: // one key replaced
				if len(keys) > 0 {
					keys[rng.IntN(len(keys))] = pool[rng.IntN(len(pool))]
				}
			}
			var rec []byte
			for j, k := range keys {
				rec = appendBytesField(rec, 6, kv(k, strconv.Itoa(i*j%3)))
			}
			scope = appendBytesField(scope, 2, rec)
		}
		body := appendBytesField(nil, 1, appendBytesField(nil, 2, scope))
		if !checkWire(t, body) {
			t.Fatalf("request %d left to pdata", req)
		}
	}
}
