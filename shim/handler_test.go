package shim

import (
	"errors"
	"reflect"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

func TestHandlerDeliver(t *testing.T) {
	full, bad := errors.New("disk full"), errors.New("bad moment")
	ms := []mapping.Moment{{Hook: "a"}, {Hook: "b"}, {Hook: "c"}}
	tests := []struct {
		name    string
		results []Result
		err     error
		want    []string // "hook: error" of each failed moment
	}{
		{"all emitted", make([]Result, 3), nil, nil},
		{"one failed", []Result{{}, {Err: bad}, {}}, nil, []string{"b: bad moment"}},
		{"the call failed", nil, full, []string{"a: disk full", "b: disk full", "c: disk full"}},
		{"results cut short", []Result{{}}, full, []string{"b: disk full", "c: disk full"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Handler(func([]mapping.Moment) ([]Result, error) { return tt.results, tt.err })
			var got []string
			h.Deliver(ms, func(m mapping.Moment, err error) { got = append(got, m.Hook+": "+err.Error()) })
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("failed %q, want %q", got, tt.want)
			}
		})
	}
}
