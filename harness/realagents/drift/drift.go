// Package drift compares what two sets of recordings show of a vendor's
// payload surface: the moments it fires (hook names, stream methods), the
// fields each moment carries, and the tool names it offers its model. The
// real-agent harnesses build one Surface from the recordings at the pinned
// version and one from the recordings at the newest published version, and
// print their Diff, so a release that renames a hook, drops a field or adds
// a tool is seen the day it ships.
//
// It is test equipment: nothing in the aep-hook binary links it.
package drift

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// maxDepth bounds how deep into a payload field paths are collected: deep
// enough for tool_input.command or error.message, shallow enough that a
// tool's output document does not flood the report.
const maxDepth = 3

// Surface is what a set of recordings shows of one vendor's payloads.
type Surface struct {
	// Moments maps each moment name to the field paths seen in it
	// ("tool_input.command", "edits[].path"; a key that is data, not a
	// name, is spelled "*").
	Moments map[string]map[string]bool
	// Tools holds the tool names offered to the model; nil when the
	// recordings did not keep them (then tools are not compared).
	Tools map[string]bool
}

// New returns an empty Surface.
func New() *Surface { return &Surface{Moments: map[string]map[string]bool{}} }

// Moment adds one firing of moment whose payload is the JSON payload (a
// payload that is not a JSON object adds the moment with no fields).
func (s *Surface) Moment(moment string, payload []byte) {
	fs := s.Moments[moment]
	if fs == nil {
		fs = map[string]bool{}
		s.Moments[moment] = fs
	}
	var v any
	if json.Unmarshal(payload, &v) != nil {
		return
	}
	if m, ok := v.(map[string]any); ok {
		walk(m, "", 1, fs)
	}
}

// Tool adds tool names offered to the model.
func (s *Surface) Tool(names ...string) {
	if s.Tools == nil {
		s.Tools = map[string]bool{}
	}
	for _, n := range names {
		if n != "" {
			s.Tools[n] = true
		}
	}
}

// walk adds the paths of m's keys, prefixed, to fs.
func walk(m map[string]any, prefix string, depth int, fs map[string]bool) {
	for k, v := range m {
		p := prefix + keyName(k)
		fs[p] = true
		if depth >= maxDepth {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			walk(x, p+".", depth+1, fs)
		case []any:
			for _, e := range x {
				if em, ok := e.(map[string]any); ok {
					walk(em, p+"[].", depth+1, fs)
				}
			}
		}
	}
}

// keyName is k when it reads as a field name, "*" when it is data (a
// question's text used as a key, an id, a path).
func keyName(k string) string {
	if k == "" || len(k) > 40 {
		return "*"
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '$' || r == '@') {
			return "*"
		}
	}
	if looksLikeID(k) {
		return "*"
	}
	return k
}

// looksLikeID reports a key of 16 or more hex digits and dashes (a UUID,
// a digest): data, not a field name.
func looksLikeID(k string) bool {
	if len(k) < 16 {
		return false
	}
	for _, r := range k {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r == '-') {
			return false
		}
	}
	return true
}

// Diff is what changed from one Surface (the pinned recordings) to
// another (the newest version's).
type Diff struct {
	// NewMoments and GoneMoments are moment names seen only in the newer
	// or only in the older recordings.
	NewMoments, GoneMoments []string
	// NewFields and GoneFields map a moment seen in both to the field
	// paths only one of them carries.
	NewFields, GoneFields map[string][]string
	// NewTools and GoneTools are the tool names offered only by one side;
	// ToolsUnknown says a side kept no tool list (nothing compared).
	NewTools, GoneTools []string
	ToolsUnknown        bool
}

// Compare returns what changed from old to cur.
func Compare(old, cur *Surface) Diff {
	d := Diff{NewFields: map[string][]string{}, GoneFields: map[string][]string{}}
	d.NewMoments = minus(keys(cur.Moments), old.Moments)
	d.GoneMoments = minus(keys(old.Moments), cur.Moments)
	for m, fs := range cur.Moments {
		ofs, ok := old.Moments[m]
		if !ok {
			continue
		}
		if n := minus(keys(fs), ofs); len(n) > 0 {
			d.NewFields[m] = n
		}
		if g := minus(keys(ofs), fs); len(g) > 0 {
			d.GoneFields[m] = g
		}
	}
	if old.Tools == nil || cur.Tools == nil {
		d.ToolsUnknown = true
	} else {
		d.NewTools = minus(keys(cur.Tools), old.Tools)
		d.GoneTools = minus(keys(old.Tools), cur.Tools)
	}
	return d
}

// Empty reports a Diff with no change (unknown tools aside).
func (d Diff) Empty() bool {
	return len(d.NewMoments)+len(d.GoneMoments)+len(d.NewFields)+len(d.GoneFields)+len(d.NewTools)+len(d.GoneTools) == 0
}

// Write prints the Diff, one change per line, each indented by indent.
func (d Diff) Write(w io.Writer, indent string) {
	line := func(what string, items []string) {
		if len(items) > 0 {
			fmt.Fprintf(w, "%s%s: %s\n", indent, what, strings.Join(items, ", "))
		}
	}
	line("moments added", d.NewMoments)
	line("moments gone", d.GoneMoments)
	for _, m := range sortedKeys(d.NewFields, d.GoneFields) {
		line(m+": fields added", d.NewFields[m])
		line(m+": fields gone", d.GoneFields[m])
	}
	line("tools added", d.NewTools)
	line("tools gone", d.GoneTools)
	if d.ToolsUnknown {
		fmt.Fprintf(w, "%stools offered: not compared (a side kept no tool list)\n", indent)
	}
	if d.Empty() {
		fmt.Fprintf(w, "%sno change in moments, fields or tools\n", indent)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// minus returns the sorted items not in set.
func minus[V any](items []string, set map[string]V) []string {
	var out []string
	for _, it := range items {
		if _, ok := set[it]; !ok {
			out = append(out, it)
		}
	}
	return out
}

func sortedKeys(a, b map[string][]string) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	return keys(seen)
}
