package shim

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

func sampleStates() []*SessionState {
	full := &SessionState{Epoch: 3, Next: 41, Log: 9000}
	full.Refs.Set("run:r1", "01JX9YB3P4T9ZK3V8Q2W6E5R7T")
	full.Refs.Set("tool:call \"quoted\" \\ \n\t\u2028 é 😀 <&>", "x")
	full.Table.Set("cc.turn", "1")
	full.Table.Set("", "")
	neg := &SessionState{Epoch: -1, Next: -9223372036854775808}
	return []*SessionState{{}, full, neg, {Table: mapping.State{Clock: 7}}}
}

// TestStateCodecMatchesJSON: the state's own codec writes what json.Marshal
// writes (but for HTML escaping), and reads back what encoding/json reads.
func TestStateCodecMatchesJSON(t *testing.T) {
	for _, st := range sampleStates() {
		got := encodeState(st)
		want, _ := json.Marshal(st)
		unHTML := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(want))
		if string(got) != unHTML {
			t.Errorf("encode:\n got %s\nwant %s", got, unHTML)
		}
		for _, b := range [][]byte{got, want} {
			fast, ok := decodeState(b)
			if !ok {
				t.Errorf("declined its own form %s", b)
				continue
			}
			var slow SessionState
			if err := json.Unmarshal(b, &slow); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fast, &slow) {
				t.Errorf("decode %s:\n got %+v\nwant %+v", b, fast, slow)
			}
		}
	}
}

// FuzzStateDecode: whatever the fast decoder accepts, encoding/json
// accepts and reads the same.
func FuzzStateDecode(f *testing.F) {
	for _, st := range sampleStates() {
		f.Add(encodeState(st))
	}
	for _, s := range []string{`{"epoch":1,"epoch":2}`, `{"epoch":1.5}`, `{"refs":null}`, `{"refs":{"e":{"a":"\ud800"}}}`,
		`{"next":01}`, ` {"log":5} `, `{"table":{"t":{"k":18446744073709551615}}}`, `{"table":{"t":{"k":-1}}}`, "{\"x\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeState(b)
		if !ok {
			return
		}
		var slow SessionState
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", b, err)
		}
		if !reflect.DeepEqual(fast, &slow) {
			t.Fatalf("%q:\n got %+v\nwant %+v", b, fast, slow)
		}
	})
}
