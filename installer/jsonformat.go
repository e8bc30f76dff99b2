package installer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// Settings files in JSON and JSONC (comments, trailing commas) are edited
// through hujson's exact syntax tree: every byte of the file that aep-hook
// does not add or remove packs back unchanged, comments included, and new
// entries are indented like their siblings.

// Shape is how an agent's JSON settings hold a hook under hooks.<Event>.
type Shape int

// The JSON registration shapes.
const (
	// Grouped: [{"matcher": M, "hooks": [{"type": "command", "command": C}]}]
	// (Claude Code, Codex hooks.json, Gemini CLI, Qwen Code).
	Grouped Shape = iota
	// Flat: [{"type": "command", "command": C}] (VS Code agent hooks).
	Flat
	// FlatMatcher: [{"matcher": M, "type": "command", "command": C}]
	// (Antigravity).
	FlatMatcher
)

// JSONHooks is the Format of a JSON or JSONC settings file whose top-level
// "hooks" object maps event names to arrays of entries.
type JSONHooks struct{ Shape Shape }

// entry renders the registration as the shape's entry, compact, with keys
// in the vendor's documented order.
func (j JSONHooks) entry(r Reg) []byte {
	var b bytes.Buffer
	handler := func() {
		b.WriteString(`"type":"command","command":`)
		b.Write(jsonString(r.Command))
		if r.Timeout > 0 {
			b.WriteString(`,"timeout":` + strconv.Itoa(r.Timeout))
		}
	}
	b.WriteByte('{')
	switch j.Shape {
	case Grouped:
		if r.Matcher != "" {
			b.WriteString(`"matcher":` + string(jsonString(r.Matcher)) + ",")
		}
		b.WriteString(`"hooks":[{`)
		handler()
		b.WriteString("}]")
	case Flat:
		handler()
	case FlatMatcher:
		if r.Matcher != "" {
			b.WriteString(`"matcher":` + string(jsonString(r.Matcher)) + ",")
		}
		handler()
	}
	b.WriteByte('}')
	return b.Bytes()
}

func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// parseRoot parses a settings file whose root must be an object; an absent
// or blank file is an empty object.
func parseRoot(old []byte) (hujson.Value, *hujson.Object, error) {
	src := old
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}\n")
	}
	v, err := hujson.Parse(src)
	if err != nil {
		return v, nil, fmt.Errorf("not valid JSON (with comments): %w; fix the file or register by hand", err)
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return v, nil, fmt.Errorf("the top level is not a JSON object")
	}
	return v, obj, nil
}

// Install implements Format.
func (j JSONHooks) Install(old []byte, regs []Reg, ours Owner) ([]byte, error) {
	root, obj, err := parseRoot(old)
	if err != nil {
		return nil, err
	}
	st := newStyle(obj)
	hooks, hooksInd, err := childObject(obj, "hooks", "", st)
	if err != nil {
		return nil, err
	}
	for _, r := range regs {
		ev, evInd, err := childArray(hooks, r.Event, hooksInd, st)
		if err != nil {
			return nil, fmt.Errorf("hooks.%s: %w", r.Event, err)
		}
		if j.update(ev, r, ours) {
			continue
		}
		est := st
		if len(ev.Elements) > 0 && !bytes.ContainsRune(ev.AfterExtra, '\n') && !bytes.ContainsRune(ev.Elements[0].BeforeExtra, '\n') {
			est = style{compact: true} // a one-line array stays one line
		}
		v, err := est.render(j.entry(r), evInd+st.unit)
		if err != nil {
			return nil, err
		}
		appendValue(ev, v, evInd+st.unit, evInd, est)
	}
	out := root.Pack()
	if old == nil || len(bytes.TrimSpace(old)) == 0 {
		out = append(bytes.TrimRight(out, "\n"), '\n')
	}
	return out, nil
}

// update points an existing registration of ours in ev at r's command. It
// reports whether one was found.
func (j JSONHooks) update(ev *hujson.Array, r Reg, ours Owner) bool {
	for i := range ev.Elements {
		for _, h := range j.handlers(&ev.Elements[i]) {
			cmd := member(h, "command")
			if cmd == nil || !ours(literalString(cmd)) {
				continue
			}
			if literalString(cmd) != r.Command {
				cmd.Value = hujson.Literal(jsonString(r.Command))
			}
			return true
		}
	}
	return false
}

// handlers returns the handler objects of one entry.
func (j JSONHooks) handlers(entry *hujson.Value) []*hujson.Object {
	o, ok := entry.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	if j.Shape != Grouped {
		return []*hujson.Object{o}
	}
	hs := member(o, "hooks")
	if hs == nil {
		return nil
	}
	arr, ok := hs.Value.(*hujson.Array)
	if !ok {
		return nil
	}
	var out []*hujson.Object
	for i := range arr.Elements {
		if h, ok := arr.Elements[i].Value.(*hujson.Object); ok {
			out = append(out, h)
		}
	}
	return out
}

// hooksOf parses a settings file and returns its root and its "hooks"
// object (nil when absent).
func hooksOf(old []byte) (hujson.Value, *hujson.Object, *hujson.Object, error) {
	root, obj, err := parseRoot(old)
	if err != nil {
		return root, nil, nil, err
	}
	hv := member(obj, "hooks")
	if hv == nil {
		return root, obj, nil, nil
	}
	hooks, ok := hv.Value.(*hujson.Object)
	if !ok {
		return root, obj, nil, fmt.Errorf(`"hooks" is not an object`)
	}
	return root, obj, hooks, nil
}

// Uninstall implements Format.
func (j JSONHooks) Uninstall(old []byte, ours Owner) ([]byte, error) {
	root, obj, hooks, err := hooksOf(old)
	if err != nil || hooks == nil {
		return old, err
	}
	changed := false
	for i := 0; i < len(hooks.Members); i++ {
		ev, ok := hooks.Members[i].Value.Value.(*hujson.Array)
		if !ok {
			continue
		}
		if j.removeOurs(ev, ours) {
			changed = true
			if len(ev.Elements) == 0 {
				removeMember(hooks, i)
				i--
			}
		}
	}
	if !changed {
		return old, nil
	}
	if len(hooks.Members) == 0 {
		removeMember(obj, indexOf(obj, "hooks"))
	}
	if len(obj.Members) == 0 && isBlank(obj.AfterExtra) && isBlank(root.BeforeExtra) && isBlank(root.AfterExtra) {
		return nil, nil
	}
	return root.Pack(), nil
}

// removeOurs drops every handler of ours from ev (and a group left with no
// handler). It reports whether anything was removed.
func (j JSONHooks) removeOurs(ev *hujson.Array, ours Owner) bool {
	removed := false
	for i := 0; i < len(ev.Elements); i++ {
		o, ok := ev.Elements[i].Value.(*hujson.Object)
		if !ok {
			continue
		}
		if j.Shape != Grouped {
			if c := member(o, "command"); c != nil && ours(literalString(c)) {
				removeElement(ev, i)
				i--
				removed = true
			}
			continue
		}
		hs := member(o, "hooks")
		if hs == nil {
			continue
		}
		arr, ok := hs.Value.(*hujson.Array)
		if !ok {
			continue
		}
		n := len(arr.Elements)
		for k := 0; k < len(arr.Elements); k++ {
			h, ok := arr.Elements[k].Value.(*hujson.Object)
			if !ok {
				continue
			}
			if c := member(h, "command"); c != nil && ours(literalString(c)) {
				removeElement(arr, k)
				k--
			}
		}
		if len(arr.Elements) == n {
			continue
		}
		removed = true
		if len(arr.Elements) == 0 {
			removeElement(ev, i)
			i--
		}
	}
	return removed
}

// Scan implements Format. Key is the Codex trust position
// "<event_key>:<group>:<handler>".
func (j JSONHooks) Scan(old []byte, ours Owner) ([]Found, error) {
	_, _, hooks, err := hooksOf(old)
	if err != nil || hooks == nil {
		return nil, err
	}
	var out []Found
	for _, m := range hooks.Members {
		event := literalString(&m.Name)
		ev, ok := m.Value.Value.(*hujson.Array)
		if !ok {
			continue
		}
		for g := range ev.Elements {
			for h, o := range j.handlers(&ev.Elements[g]) {
				if c := member(o, "command"); c != nil && ours(literalString(c)) {
					f := Found{Event: event, Command: literalString(c),
						Key: fmt.Sprintf("%s:%d:%d", snake(event), g, h)}
					if t := member(o, "timeout"); t != nil {
						if l, ok := t.Value.(hujson.Literal); ok && l.Kind() == '0' {
							f.Timeout = int(l.Float())
						}
					}
					out = append(out, f)
				}
			}
		}
	}
	return out, nil
}

// style is the file's indentation: one unit per level, or compact (a
// one-line file stays one line).
type style struct {
	unit    string
	compact bool
}

// newStyle reads the indentation unit from the root object's members.
func newStyle(obj *hujson.Object) style {
	if len(obj.Members) == 0 {
		if len(obj.AfterExtra) > 0 && !bytes.ContainsRune(obj.AfterExtra, '\n') {
			return style{compact: true}
		}
		return style{unit: "  "}
	}
	ind, ok := indentOf(obj.Members[0].Name.BeforeExtra)
	if !ok {
		return style{compact: true}
	}
	if ind == "" {
		ind = "  "
	}
	return style{unit: ind}
}

// indentOf returns the whitespace after the last newline of extra, and
// whether extra holds a newline.
func indentOf(extra hujson.Extra) (string, bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", false
	}
	rest := extra[i+1:]
	if len(bytes.Trim(rest, " \t")) != 0 {
		return "", true
	}
	return string(rest), true
}

// render parses a compact JSON value re-indented for a line at ind.
func (s style) render(compact []byte, ind string) (hujson.Value, error) {
	src := compact
	if !s.compact {
		var b bytes.Buffer
		if err := json.Indent(&b, compact, ind, s.unit); err != nil {
			return hujson.Value{}, err
		}
		src = b.Bytes()
	}
	return hujson.Parse(src)
}

// lead is the extra before a new item at indentation ind.
func (s style) lead(ind string) hujson.Extra {
	if s.compact {
		return hujson.Extra("")
	}
	return hujson.Extra("\n" + ind)
}

// member returns the value of obj's member name, nil when absent.
func member(obj *hujson.Object, name string) *hujson.Value {
	if i := indexOf(obj, name); i >= 0 {
		return &obj.Members[i].Value
	}
	return nil
}

func indexOf(obj *hujson.Object, name string) int {
	for i := range obj.Members {
		if literalString(&obj.Members[i].Name) == name {
			return i
		}
	}
	return -1
}

// literalString returns a string literal's value, "" for anything else.
func literalString(v *hujson.Value) string {
	if l, ok := v.Value.(hujson.Literal); ok && l.Kind() == '"' {
		return l.String()
	}
	return ""
}

// childObject returns obj's member name as an object, adding an empty one
// when absent, with the indentation of the member's line; obj's own line
// is at ind.
func childObject(obj *hujson.Object, name, ind string, st style) (*hujson.Object, string, error) {
	v, mind, err := child(obj, name, ind, st, "{}")
	if err != nil {
		return nil, "", err
	}
	o, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, "", fmt.Errorf("%q is not an object", name)
	}
	return o, mind, nil
}

// childArray is childObject for an array member.
func childArray(obj *hujson.Object, name, ind string, st style) (*hujson.Array, string, error) {
	v, mind, err := child(obj, name, ind, st, "[]")
	if err != nil {
		return nil, "", err
	}
	a, ok := v.Value.(*hujson.Array)
	if !ok {
		return nil, "", fmt.Errorf("not an array")
	}
	return a, mind, nil
}

// child finds or adds obj's member name (empty value empty) and returns
// it with the indentation of its line. obj's own line is at ind.
func child(obj *hujson.Object, name, ind string, st style, empty string) (*hujson.Value, string, error) {
	if i := indexOf(obj, name); i >= 0 {
		mind, ok := indentOf(obj.Members[i].Name.BeforeExtra)
		if !ok {
			mind = ind + st.unit
		}
		return &obj.Members[i].Value, mind, nil
	}
	mind := ind + st.unit
	if len(obj.Members) > 0 && !bytes.ContainsRune(obj.AfterExtra, '\n') && !bytes.ContainsRune(obj.Members[0].Name.BeforeExtra, '\n') {
		st = style{compact: true} // a one-line object stays one line
	}
	val, _ := hujson.Parse([]byte(empty))
	val.BeforeExtra = hujson.Extra(" ")
	if st.compact {
		val.BeforeExtra = nil
	}
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: st.lead(mind), Value: hujson.Literal(jsonString(name))},
		Value: val,
	}
	trailing := len(obj.Members) > 0 && obj.Members[len(obj.Members)-1].Value.AfterExtra != nil
	obj.Members = append(obj.Members, m)
	if trailing {
		obj.Members[len(obj.Members)-1].Value.AfterExtra = hujson.Extra{}
	}
	closeComposite(&obj.AfterExtra, ind, st)
	return &obj.Members[len(obj.Members)-1].Value, mind, nil
}

// appendValue appends v to arr as a new last element at indentation ind;
// arr's own line is at outer.
func appendValue(arr *hujson.Array, v hujson.Value, ind, outer string, st style) {
	v.BeforeExtra = st.lead(ind)
	if n := len(arr.Elements); n > 0 {
		if !st.compact {
			if li, ok := indentOf(arr.Elements[n-1].BeforeExtra); ok {
				v.BeforeExtra = hujson.Extra("\n" + li)
			}
		} else if len(arr.Elements[n-1].BeforeExtra) > 0 {
			v.BeforeExtra = hujson.Extra(" ")
		}
	}
	trailing := len(arr.Elements) > 0 && arr.Elements[len(arr.Elements)-1].AfterExtra != nil
	v.AfterExtra = nil
	arr.Elements = append(arr.Elements, v)
	if trailing {
		arr.Elements[len(arr.Elements)-1].AfterExtra = hujson.Extra{}
	}
	closeComposite(&arr.AfterExtra, outer, st)
}

// closeComposite puts the closing bracket of a multi-line composite on a
// line of its own at ind.
func closeComposite(after *hujson.Extra, ind string, st style) {
	if st.compact || bytes.ContainsRune(*after, '\n') {
		return
	}
	*after = hujson.Extra("\n" + ind)
}

// removeElement drops arr's element i, keeping the trailing-comma style.
func removeElement(arr *hujson.Array, i int) {
	last := i == len(arr.Elements)-1
	gone := arr.Elements[i]
	arr.Elements = append(arr.Elements[:i], arr.Elements[i+1:]...)
	if last && len(arr.Elements) > 0 {
		fixTrailing(&arr.Elements[len(arr.Elements)-1], gone.AfterExtra != nil, &arr.AfterExtra)
	}
}

// removeMember drops obj's member i, keeping the trailing-comma style.
func removeMember(obj *hujson.Object, i int) {
	if i < 0 {
		return
	}
	last := i == len(obj.Members)-1
	gone := obj.Members[i]
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	if last && len(obj.Members) > 0 {
		fixTrailing(&obj.Members[len(obj.Members)-1].Value, gone.Value.AfterExtra != nil, &obj.AfterExtra)
	}
}

// fixTrailing gives the new last item v the trailing comma the removed last
// item had (or had not).
func fixTrailing(v *hujson.Value, comma bool, after *hujson.Extra) {
	switch {
	case comma && v.AfterExtra == nil:
		v.AfterExtra = hujson.Extra{}
	case !comma && v.AfterExtra != nil:
		*after = append(append(hujson.Extra{}, v.AfterExtra...), *after...)
		v.AfterExtra = nil
	}
}

func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// snake turns an event name into Codex's trust-key label: PreToolUse ->
// pre_tool_use.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
