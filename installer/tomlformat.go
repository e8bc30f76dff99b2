package installer

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// TOMLHooks is the Format of a TOML file holding a top-level `hooks` array
// of {event, matcher, command, timeout} tables (Kimi Code's config.toml).
// Edits are made on the text at the byte ranges go-toml's parser reports,
// so comments and layout elsewhere stay as they were; every result is
// decoded again and compared with the original before it is accepted.
//
// Registrations are written as the inline `hooks = [...]` array, placed
// before the first [section] (a top-level key after a section header would
// belong to that section). A file that already uses [[hooks]] tables gets
// [[hooks]] tables appended at its end, where they must stay.
type TOMLHooks struct{}

// tomlEntry is one element of the hooks array as the parser saw it.
type tomlEntry struct {
	start, end   int // the inline table's bytes, or the [[hooks]] table's lines
	event, cmd   string
	cmdRange     [2]int
	timeout      int
	timeoutRange [2]int
}

// tomlDoc is what the installer needs to know of the file.
type tomlDoc struct {
	inline     bool // a top-level hooks = [...] exists
	kvStart    int  // its key's first byte
	arrEnd     int  // the byte after its closing bracket
	tables     bool // [[hooks]] tables exist
	entries    []tomlEntry
	firstTable int // offset of the first section header line, -1 when none
}

func parseTOML(b []byte) (tomlDoc, error) {
	d := tomlDoc{firstTable: -1}
	var p unstable.Parser
	p.Reset(b)
	inHooksTable := -1 // index in entries of the [[hooks]] table being read
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			k := e.Key()
			k.Next()
			off := int(k.Node().Raw.Offset)
			start := bytes.LastIndexByte(b[:off], '\n') + 1
			if d.firstTable < 0 {
				d.firstTable = start
			}
			if inHooksTable >= 0 {
				d.entries[inHooksTable].end = start
				inHooksTable = -1
			}
			if e.Kind == unstable.ArrayTable && keyString(e) == "hooks" {
				d.tables = true
				d.entries = append(d.entries, tomlEntry{start: start, end: len(b)})
				inHooksTable = len(d.entries) - 1
			}
		case unstable.KeyValue:
			name := keyString(e)
			if inHooksTable >= 0 {
				readField(&d.entries[inHooksTable], name, e.Value())
				continue
			}
			if d.firstTable >= 0 || name != "hooks" {
				continue
			}
			v := e.Value()
			if v.Kind != unstable.Array {
				return d, fmt.Errorf("top-level hooks is not an array")
			}
			d.inline = true
			k := e.Key()
			k.Next()
			d.kvStart = int(k.Node().Raw.Offset)
			d.arrEnd = int(e.Raw.Offset + e.Raw.Length)
			it := v.Children()
			for it.Next() {
				n := it.Node()
				if n.Kind != unstable.InlineTable {
					continue
				}
				ent := tomlEntry{start: int(n.Raw.Offset)}
				end := ent.start + 1
				fields := n.Children()
				for fields.Next() {
					f := fields.Node()
					readField(&ent, keyString(f), f.Value())
					end = int(f.Raw.Offset + f.Raw.Length)
				}
				if j := bytes.IndexByte(b[end:], '}'); j >= 0 {
					end += j + 1
				}
				ent.end = end
				d.entries = append(d.entries, ent)
			}
		}
	}
	if err := p.Error(); err != nil {
		return d, fmt.Errorf("not valid TOML: %w; fix the file or register by hand", err)
	}
	return d, nil
}

func keyString(e *unstable.Node) string {
	var parts []string
	it := e.Key()
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return strings.Join(parts, ".")
}

func readField(ent *tomlEntry, name string, v *unstable.Node) {
	if v != nil && v.Kind == unstable.Integer && name == "timeout" {
		ent.timeout, _ = strconv.Atoi(string(v.Data))
		ent.timeoutRange = [2]int{int(v.Raw.Offset), int(v.Raw.Offset + v.Raw.Length)}
		return
	}
	if v == nil || v.Kind != unstable.String {
		return
	}
	switch name {
	case "event":
		ent.event = string(v.Data)
	case "command":
		ent.cmd = string(v.Data)
		ent.cmdRange = [2]int{int(v.Raw.Offset), int(v.Raw.Offset + v.Raw.Length)}
	}
}

func tomlInline(r Reg) string {
	var b strings.Builder
	b.WriteString(`{event = ` + string(jsonString(r.Event)))
	if r.Matcher != "" {
		b.WriteString(`, matcher = ` + string(jsonString(r.Matcher)))
	}
	b.WriteString(`, command = ` + string(jsonString(r.Command)))
	if r.Timeout > 0 {
		b.WriteString(`, timeout = ` + strconv.Itoa(r.Timeout))
	}
	b.WriteString("}")
	return b.String()
}

func tomlTable(r Reg) string {
	var b strings.Builder
	b.WriteString("\n[[hooks]]\nevent = " + string(jsonString(r.Event)) + "\n")
	if r.Matcher != "" {
		b.WriteString("matcher = " + string(jsonString(r.Matcher)) + "\n")
	}
	b.WriteString("command = " + string(jsonString(r.Command)) + "\n")
	if r.Timeout > 0 {
		b.WriteString("timeout = " + strconv.Itoa(r.Timeout) + "\n")
	}
	return b.String()
}

// edit is one splice of the text.
type edit struct {
	start, end int
	text       string
}

func splice(b []byte, es []edit) []byte {
	// Edits are applied back to front so earlier offsets stay valid.
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		b = append(b[:e.start:e.start], append([]byte(e.text), b[e.end:]...)...)
	}
	return b
}

// Install implements Format.
func (TOMLHooks) Install(old []byte, regs []Reg, ours Owner) ([]byte, error) {
	b := append([]byte(nil), old...)
	d, err := parseTOML(b)
	if err != nil {
		return nil, err
	}
	var es []edit
	var missing []Reg
	for _, r := range regs {
		found := false
		for _, ent := range d.entries {
			if ent.event == r.Event && ours(ent.cmd) {
				found = true
				if ent.cmd != r.Command && ent.cmdRange[1] > 0 {
					es = append(es, edit{ent.cmdRange[0], ent.cmdRange[1], string(jsonString(r.Command))})
				}
				// The timeout is ours too: a control install widens it
				// to fit the wait, a plain one puts it back.
				if r.Timeout > 0 && ent.timeout != r.Timeout && ent.timeoutRange[1] > 0 {
					es = append(es, edit{ent.timeoutRange[0], ent.timeoutRange[1], strconv.Itoa(r.Timeout)})
				}
				break
			}
		}
		if !found {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		es = append(es, d.insert(b, missing))
	}
	sortEdits(es)
	out := splice(b, es)
	return out, verifyTOML(old, out, ours)
}

// insert is the edit that adds regs to the document.
func (d tomlDoc) insert(b []byte, regs []Reg) edit {
	switch {
	case d.tables && !d.inline:
		var s strings.Builder
		for _, r := range regs {
			s.WriteString(tomlTable(r))
		}
		at := len(b)
		pre := ""
		if at > 0 && b[at-1] != '\n' {
			pre = "\n"
		}
		return edit{at, at, pre + s.String()}
	case d.inline:
		closing := d.arrEnd - 1
		var inline []tomlEntry
		for _, e := range d.entries {
			if e.start < d.arrEnd {
				inline = append(inline, e)
			}
		}
		if len(inline) == 0 {
			var s strings.Builder
			for _, r := range regs {
				s.WriteString("\n  " + tomlInline(r) + ",")
			}
			s.WriteString("\n")
			open := bytes.LastIndexByte(b[:closing], '[')
			return edit{open + 1, closing, s.String()}
		}
		last := inline[len(inline)-1]
		ind := lineIndent(b, last.start)
		after := last.end
		rest := bytes.TrimLeft(b[after:closing], " \t")
		var s strings.Builder
		if len(rest) > 0 && rest[0] == ',' {
			after = closing - len(rest) + 1
			for _, r := range regs {
				s.WriteString("\n" + ind + tomlInline(r) + ",")
			}
		} else {
			for _, r := range regs {
				s.WriteString(",\n" + ind + tomlInline(r))
			}
		}
		return edit{after, after, s.String()}
	default:
		var s strings.Builder
		s.WriteString("hooks = [\n")
		for _, r := range regs {
			s.WriteString("  " + tomlInline(r) + ",\n")
		}
		s.WriteString("]\n")
		at := d.firstTable
		if at < 0 {
			at = len(b)
			if at > 0 && b[at-1] != '\n' {
				return edit{at, at, "\n" + s.String()}
			}
			return edit{at, at, s.String()}
		}
		at = leadingComments(b, at)
		return edit{at, at, s.String() + "\n"}
	}
}

// leadingComments moves a section header's line start up over the comment
// lines directly above it, so hooks go before the section's own comments.
func leadingComments(b []byte, at int) int {
	for at > 0 {
		prev := bytes.LastIndexByte(b[:at-1], '\n') + 1
		if !bytes.HasPrefix(bytes.TrimLeft(b[prev:at], " \t"), []byte("#")) {
			break
		}
		at = prev
	}
	return at
}

func lineIndent(b []byte, at int) string {
	start := bytes.LastIndexByte(b[:at], '\n') + 1
	ind := b[start:at]
	if len(bytes.Trim(ind, " \t")) != 0 {
		return "  "
	}
	return string(ind)
}

// sortEdits orders edits by position and trims overlaps (two removals
// sharing a blank line).
func sortEdits(es []edit) {
	sort.SliceStable(es, func(i, j int) bool { return es[i].start < es[j].start })
	for i := 1; i < len(es); i++ {
		if es[i].start < es[i-1].end {
			es[i].start = min(es[i-1].end, es[i].end)
		}
	}
}

// Uninstall implements Format.
func (TOMLHooks) Uninstall(old []byte, ours Owner) ([]byte, error) {
	d, err := parseTOML(old)
	if err != nil {
		return nil, err
	}
	var es []edit
	kept := 0
	for _, ent := range d.entries {
		if !ours(ent.cmd) {
			if ent.start < d.arrEnd || !d.inline {
				kept++
			}
			continue
		}
		if d.inline && ent.start < d.arrEnd {
			es = append(es, removeInline(old, ent, d.arrEnd-1))
			continue
		}
		start := ent.start
		if start > 0 && bytes.HasSuffix(old[:start], []byte("\n\n")) {
			start--
		}
		es = append(es, edit{start, ent.end, ""})
	}
	if len(es) == 0 {
		return old, nil
	}
	if d.inline && kept == 0 && !d.tables {
		// Nothing but ours was in the array: remove the key with the blank
		// line install put after it.
		start := bytes.LastIndexByte(old[:d.kvStart], '\n') + 1
		end := d.arrEnd
		if end < len(old) && old[end] == '\n' {
			end++
		}
		if bytes.HasPrefix(old[end:], []byte("\n")) {
			end++
		}
		es = []edit{{start, end, ""}}
	}
	sortEdits(es)
	out := splice(append([]byte(nil), old...), es)
	if len(bytes.TrimSpace(out)) == 0 {
		return nil, nil
	}
	return out, verifyTOML(old, out, ours)
}

// removeInline removes one inline-table element with its comma, and its
// line when nothing else is on it.
func removeInline(b []byte, ent tomlEntry, closing int) edit {
	start, end := ent.start, ent.end
	j := end
	for j < closing && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	comma := j < closing && b[j] == ','
	if comma {
		end = j + 1
	}
	ls := bytes.LastIndexByte(b[:start], '\n') + 1
	le := end
	for le < len(b) && (b[le] == ' ' || b[le] == '\t') {
		le++
	}
	if len(bytes.Trim(b[ls:start], " \t")) == 0 && le < len(b) && b[le] == '\n' {
		if comma || le+1 > closing {
			return edit{ls, le + 1, ""}
		}
	}
	if !comma {
		// The last element without a trailing comma: take the comma before it.
		k := start
		for k > 0 && strings.IndexByte(" \t\n\r", b[k-1]) >= 0 {
			k--
		}
		if k > 0 && b[k-1] == ',' {
			start = k - 1
		}
	}
	return edit{start, end, ""}
}

// Scan implements Format.
func (TOMLHooks) Scan(old []byte, ours Owner) ([]Found, error) {
	d, err := parseTOML(old)
	if err != nil {
		return nil, err
	}
	var out []Found
	for _, e := range d.entries {
		if ours(e.cmd) {
			out = append(out, Found{Event: e.event, Command: e.cmd, Timeout: e.timeout})
		}
	}
	return out, nil
}

// verifyTOML decodes both versions and checks that nothing but hooks of
// ours differs: the safety net under the text edits.
func verifyTOML(old, out []byte, ours Owner) error {
	var a, b map[string]any
	if err := toml.Unmarshal(old, &a); err != nil {
		return fmt.Errorf("not valid TOML: %w", err)
	}
	if err := toml.Unmarshal(out, &b); err != nil {
		return fmt.Errorf("the edit would break the file (%v); register by hand", err)
	}
	strip := func(m map[string]any) []any {
		hs, _ := m["hooks"].([]any)
		delete(m, "hooks")
		return notOurs(hs, ours)
	}
	if !reflect.DeepEqual(strip(a), strip(b)) || !reflect.DeepEqual(a, b) {
		return fmt.Errorf("the edit would change more than aep-hook's hooks; register by hand")
	}
	return nil
}
