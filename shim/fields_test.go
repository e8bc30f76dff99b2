package shim

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
)

// fieldKeys are the keys a random payload draws from: declared and
// undeclared ones, the ones the emitter adds itself, and keys that sort
// apart only by bytes (case, punctuation).
var fieldKeys = []string{
	"model", "tool_name", "call_id", "duration_ms", "success", "prompt", "error", "arguments", "output",
	"host.name", "body", "digests_missing", "thread_id", "Model", "model_", "a.b", "a_b", "é", "z", "",
	"mcp_server_origin", "user.email", "tool",
}

// fieldValues are the values a random payload draws from: content the
// pipeline and the token rules must catch, a missing digest, every JSON
// kind, nested content.
var fieldValues = []any{
	"gpt-5.2-codex", "shell", "total 0\n", "[REDACTED]", "",
	"sk-proj-" + strings.Repeat("aB3dE5fG7h", 5), "AKIAIOSFODNN7EXAMPLE", "password=hunter2",
	"/home/alice/src/secret.txt", "mail bob@example.com now", "https://user:pa55w0rd@example.com/x",
	"ghp_" + strings.Repeat("Zx9", 12), mapping.DigestMissing,
	int64(412), float64(1.5), true, nil,
	map[string]any{"token": "sk-ant-" + strings.Repeat("q1W2e3R4", 6), "n": int64(1)},
	[]any{"a", "password=x", int64(2)},
	map[string]any{"name": "Bash", "call_id": "c1"},
}

// randomPayload is a payload of distinct keys as a list (in random order,
// with the levels levels declares) and as the map the same table would have built.
func randomPayload(r *rand.Rand) ([]redact.Field, map[string]any, map[string]redact.Level) {
	levels := map[string]redact.Level{}
	for _, k := range fieldKeys {
		switch r.IntN(4) {
		case 0:
			levels[k] = redact.Metadata
		case 1:
			levels[k] = redact.Redacted
		case 2:
			levels[k] = redact.Full
		}
	}
	data := map[string]any{}
	var fs []redact.Field
	for _, i := range r.Perm(len(fieldKeys))[:r.IntN(len(fieldKeys)+1)] {
		k, v := fieldKeys[i], fieldValues[r.IntN(len(fieldValues))]
		l, ok := levels[k]
		if !ok {
			l = redact.Full
		}
		data[k] = v
		fs = append(fs, redact.Field{Key: k, Value: v, Level: l})
	}
	if r.IntN(8) == 0 { // more members than the encoder sorts on the stack
		for i := range 70 {
			k := "extra." + strconv.Itoa(i)
			data[k] = fieldValues[r.IntN(len(fieldValues))]
			fs = append(fs, redact.Field{Key: k, Value: data[k], Level: redact.Full})
		}
		r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	}
	return fs, data, levels
}

// TestFieldsMatchData holds the list payload (Draft.Fields) to the map
// payload's bytes and events at every ceiling, in both batch modes.
func TestFieldsMatchData(t *testing.T) {
	for seed := range uint64(300) {
		checkFieldsMatchData(t, seed)
	}
}

// FuzzFieldsMatchData is TestFieldsMatchData on any seed.
func FuzzFieldsMatchData(f *testing.F) {
	f.Add(uint64(1))
	f.Add(uint64(77))
	f.Fuzz(func(t *testing.T, seed uint64) { checkFieldsMatchData(t, seed) })
}

func checkFieldsMatchData(t *testing.T, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed>>7))
	types := []string{"x.codex.otel.tool_result", "x.codex.otel.unknown", "tool.completed", "session.started"}
	var asList, asMap []mapping.Draft
	at := time.Date(2026, 7, 3, 10, 15, 4, 0, time.UTC)
	for n := 1 + r.IntN(4); n > 0; n-- {
		fs, data, levels := randomPayload(r)
		typ := types[r.IntN(len(types))]
		asList = append(asList, mapping.Draft{Type: typ, Fields: fs, Levels: levels, Time: at})
		asMap = append(asMap, mapping.Draft{Type: typ, Data: data, Levels: levels, Time: at})
	}
	vendor := func(ds []mapping.Draft) mapping.Vendor {
		return mapping.Vendor{
			Name:     "fields",
			Identify: func(mapping.Moment) (string, string) { return "Moment", "s" },
			Map: func(m mapping.Moment, _ *mapping.State) ([]mapping.Draft, error) {
				d := ds[m.Raw[0]]
				d.Fields = append([]redact.Field(nil), d.Fields...) // each run its own, as a table's
				return []mapping.Draft{d}, nil
			},
		}
	}
	ms := make([]mapping.Moment, len(asList))
	for i := range ms {
		ms[i] = mapping.Moment{Raw: []byte{byte(i)}, Nonce: string(rune('a' + i))}
	}
	for _, ceiling := range []redact.Level{redact.None, redact.Metadata, redact.Redacted, redact.Full} {
		run := func(ds []mapping.Draft, keep bool) ([]string, []Result) {
			out := &copiedLines{}
			e := &Emitter{
				Host: "h", Policy: redact.Policy{Default: ceiling}, Pipeline: redact.NewPipeline(redact.Options{}),
				Store: NewMemStore(), Sink: out, StableIDs: true,
			}
			batch := e.HandleBatch
			if !keep {
				batch = e.HandleBatchCounts
			}
			rs, err := batch(vendor(ds), ms)
			if err != nil {
				t.Fatalf("seed %d ceiling %s: %v", seed, ceiling, err)
			}
			return out.out, rs
		}
		want, wantRs := run(asMap, true)
		got, gotRs := run(asList, true)
		counted, countedRs := run(asList, false)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(counted, want) {
			t.Fatalf("seed %d ceiling %s:\nmap:    %q\nfields: %q\ncounts: %q", seed, ceiling, want, got, counted)
		}
		if !reflect.DeepEqual(gotRs, wantRs) {
			t.Fatalf("seed %d ceiling %s: results\nmap:    %+v\nfields: %+v", seed, ceiling, wantRs, gotRs)
		}
		for i := range countedRs {
			if countedRs[i].Events != nil || countedRs[i].Suppressed != wantRs[i].Suppressed || countedRs[i].Err != nil {
				t.Fatalf("seed %d ceiling %s: counted result %+v", seed, ceiling, countedRs[i])
			}
		}
	}
}

// copiedLines is lines saying it is done with them on return (it copies
// them): a counting batch then reuses their storage for the next.
type copiedLines struct{ lines }

func (*copiedLines) linesDoneOnReturn() bool { return true }
