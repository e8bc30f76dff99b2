package mapping

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/redact"
)

// mapCompanion is the companion draft's payload as the table built it as a
// map: the reference the list form (Draft.Fields) is held to.
func mapCompanion(p *otelProfile, r *OTelRecord) (map[string]any, map[string]redact.Level) {
	data := map[string]any{}
	r.attrs().each(func(k string, v any) {
		if v == nil || p.identity[k] {
			return
		}
		if s, ok := v.(string); ok && s == vendorRedactedMarker {
			return
		}
		data[k] = v
	})
	levels := p.levels
	if hv := r.Resource["host.name"]; isNonEmptyString(hv) {
		if _, dup := data["host.name"]; !dup {
			data["host.name"] = hv
		}
		levels = p.withHost()
	}
	if r.Body != nil {
		if _, dup := data["body"]; !dup {
			data["body"] = r.Body
		}
	}
	return data, levels
}

// randomOTelRecord is a record of random attributes, in the receiver's list
// form or as a map.
func randomOTelRecord(r *rand.Rand, p *otelProfile) *OTelRecord {
	keys := []string{"event.name", "conversation.id", "app.version", "model", "prompt", "output",
		"host.name", "body", "undeclared", "Model", "a.b", "a_b", "tool_name", "error"}
	for k := range p.identity {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	values := []any{"v", "", vendorRedactedMarker, nil, int64(3), true, []any{"x"}, map[string]any{"k": "v"},
		"sk-proj-" + strings.Repeat("aB3dE5fG7h", 5)}
	rec := &OTelRecord{Resource: map[string]any{}}
	switch r.IntN(3) {
	case 0:
		rec.Resource["host.name"] = "box"
	case 1:
		rec.Resource["host.name"] = ""
	}
	if r.IntN(2) == 0 {
		rec.Body = values[r.IntN(len(values))]
	}
	flat := r.IntN(2) == 0
	if !flat {
		rec.Attributes = map[string]any{}
	}
	for _, i := range r.Perm(len(keys))[:r.IntN(len(keys)+1)] {
		v := values[r.IntN(len(values))]
		if flat {
			rec.Flat = append(rec.Flat, Attr{keys[i], v})
		} else {
			rec.Attributes[keys[i]] = v
		}
	}
	if flat && r.IntN(10) == 0 { // past what the encoder sorts on the stack
		for i := range 70 {
			rec.Flat = append(rec.Flat, Attr{"extra." + strconv.Itoa(i), values[r.IntN(len(values))]})
		}
	}
	if flat && rec.Flat == nil {
		rec.Flat = []Attr{}
	}
	return rec
}

// TestCompanionFields holds the companion's list payload to the map the
// table built before: the same members, once each, each at the level the map's
// levels declare, on random records of both profiles.
func TestCompanionFields(t *testing.T) {
	arena := &Arena{} // shared by both profiles: its memo must tell them apart
	for _, p := range []*otelProfile{codexOtelProfile(), vscodeOtelProfile()} {
		r := rand.New(rand.NewPCG(1, 2))
		for i := range 2000 {
			switch {
			case i%3 == 0:
				arena = nil // the allocating path too
			case arena == nil:
				arena = &Arena{}
			case i%50 == 1:
				arena.Reset()
			}
			rec := randomOTelRecord(r, p)
			d := p.companion(rec, "tool_result", arena)
			wantData, wantLevels := mapCompanion(p, rec)
			if d.Data != nil || !reflect.DeepEqual(d.Levels, wantLevels) {
				t.Fatalf("%+v: data %v levels differ", rec, d.Data)
			}
			got := map[string]any{}
			for _, f := range d.Fields {
				if _, dup := got[f.Key]; dup {
					t.Fatalf("%+v: %s twice", rec, f.Key)
				}
				if f.Level != levelOf(wantLevels, f.Key) {
					t.Fatalf("%+v: %s at %s", rec, f.Key, f.Level)
				}
				got[f.Key] = f.Value
			}
			if !reflect.DeepEqual(got, wantData) {
				t.Fatalf("%+v:\nfields %v\nmap    %v", rec, got, wantData)
			}
		}
	}
}

// TestSetField: setField replaces as a map assignment does.
func TestSetField(t *testing.T) {
	fs := []redact.Field{{Key: "b"}, {Key: "d"}}
	fs = setField(fs, "c", 1, redact.Metadata)
	fs = setField(fs, "d", 3, redact.Redacted)
	want := []redact.Field{{Key: "b"}, {Key: "d", Value: 3, Level: redact.Redacted}, {Key: "c", Value: 1, Level: redact.Metadata}}
	if !reflect.DeepEqual(fs, want) {
		t.Errorf("setField: %v", fs)
	}
}
