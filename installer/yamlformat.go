package installer

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	yaml "github.com/goccy/go-yaml"
)

// YAMLHooks is the Format of a YAML file holding a top-level `hooks:`
// mapping from event names to lists of {command, timeout} entries (Hermes's
// config.yaml). Edits are line edits guided by indentation: each
// registration is one flow-style item, `- {command: "...", timeout: 60}`,
// or one `event: [{...}]` line, so every other line (comments included)
// stays as it was. Every result is decoded again and compared with the
// original; an edit that would change anything but aep-hook's hooks is
// refused with the snippet to add by hand.
type YAMLHooks struct{}

func yamlItem(r Reg) string {
	s := "{command: " + string(jsonString(r.Command))
	if r.Matcher != "" {
		s += ", matcher: " + string(jsonString(r.Matcher))
	}
	if r.Timeout > 0 {
		s += ", timeout: " + strconv.Itoa(r.Timeout)
	}
	return s + "}"
}

// yline is one line of the file with its indentation.
type yline struct {
	text   string
	indent int
	blank  bool // empty or comment only
}

func splitYAML(b []byte) []yline {
	raw := strings.SplitAfter(string(b), "\n")
	if len(raw) > 0 && raw[len(raw)-1] == "" {
		raw = raw[:len(raw)-1]
	}
	out := make([]yline, len(raw))
	for i, t := range raw {
		body := strings.TrimRight(t, "\r\n")
		trim := strings.TrimLeft(body, " ")
		out[i] = yline{text: t, indent: len(body) - len(trim), blank: trim == "" || trim[0] == '#'}
	}
	return out
}

// block returns the index range (from, to] of the lines nested under line
// i: every following line indented deeper, blank lines inside included.
func block(ls []yline, i int) int {
	end := i
	for j := i + 1; j < len(ls); j++ {
		if ls[j].blank {
			continue
		}
		if ls[j].indent <= ls[i].indent {
			break
		}
		end = j
	}
	return end
}

// keyLine reports whether line l is `key:` at the given indentation, and
// the text after the colon (the inline value, comment stripped).
func keyLine(l yline, key string, indent int) (string, bool) {
	if l.blank || l.indent != indent {
		return "", false
	}
	body := strings.TrimRight(l.text, "\r\n")[indent:]
	rest, ok := strings.CutPrefix(body, key+":")
	if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return "", false
	}
	if i := strings.Index(rest, " #"); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSpace(rest), true
}

func joinLines(ls []yline) []byte {
	var b bytes.Buffer
	for _, l := range ls {
		b.WriteString(l.text)
	}
	return b.Bytes()
}

func mkLine(indent int, s, nl string) yline {
	return yline{text: strings.Repeat(" ", indent) + s + nl, indent: indent}
}

// newline is the file's line ending.
func newline(b []byte) string {
	if bytes.Contains(b, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// Install implements Format.
func (YAMLHooks) Install(old []byte, regs []Reg, ours Owner) ([]byte, error) {
	if _, err := decodeYAML(old); err != nil {
		return nil, err
	}
	have, err := yamlHooks(old, ours)
	if err != nil {
		return nil, err
	}
	nl := newline(old)
	ls := splitYAML(old)
	if len(ls) > 0 && !strings.HasSuffix(ls[len(ls)-1].text, "\n") {
		ls[len(ls)-1].text += nl
	}
	h := -1
	var val string
	for i, l := range ls {
		if v, ok := keyLine(l, "hooks", 0); ok {
			h, val = i, v
			break
		}
	}
	switch {
	case h < 0:
		ls = append(ls, mkLine(0, "hooks:", nl))
		h = len(ls) - 1
	case val == "{}" || val == "" || val == "null" || val == "~":
		ls[h] = mkLine(0, "hooks:", nl)
	default:
		return nil, fmt.Errorf("hooks is written inline (%q); register by hand", val)
	}
	for _, r := range regs {
		if cmd, ok := have[r.Event]; ok && ours(cmd) {
			if cmd == r.Command {
				continue
			}
			return nil, fmt.Errorf("hooks.%s runs %q; remove it (aep-hook uninstall hermes) and install again", r.Event, cmd)
		}
		end := block(ls, h)
		ci := 2
		for j := h + 1; j <= end; j++ {
			if !ls[j].blank {
				ci = ls[j].indent
				break
			}
		}
		e := -1
		var ev string
		for j := h + 1; j <= end; j++ {
			if v, ok := keyLine(ls[j], r.Event, ci); ok {
				e, ev = j, v
				break
			}
		}
		item := yamlItem(r)
		switch {
		case e < 0:
			ls = insertLines(ls, end+1, mkLine(ci, r.Event+": ["+item+"]", nl))
		case ev == "":
			sub := block(ls, e)
			si := ci + 2
			for j := e + 1; j <= sub; j++ {
				if !ls[j].blank {
					si = ls[j].indent
					break
				}
			}
			ls = insertLines(ls, sub+1, mkLine(si, "- "+item, nl))
		case strings.HasPrefix(ev, "[") && strings.HasSuffix(ev, "]"):
			t := strings.TrimRight(ls[e].text, "\r\n")
			k := strings.LastIndex(t, "]")
			sep := ", "
			if strings.TrimSpace(ev[1:len(ev)-1]) == "" {
				sep = ""
			}
			ls[e].text = t[:k] + sep + item + t[k:] + nl
		default:
			return nil, fmt.Errorf("hooks.%s is written as %q; register by hand", r.Event, ev)
		}
	}
	out := joinLines(ls)
	return out, verifyYAML(old, out, ours)
}

func insertLines(ls []yline, at int, l yline) []yline {
	ls = append(ls, yline{})
	copy(ls[at+1:], ls[at:])
	ls[at] = l
	return ls
}

// Uninstall implements Format: it removes the lines (or flow items) install
// wrote, recognised by command.
func (YAMLHooks) Uninstall(old []byte, ours Owner) ([]byte, error) {
	ls := splitYAML(old)
	h := -1
	for i, l := range ls {
		if _, ok := keyLine(l, "hooks", 0); ok {
			h = i
			break
		}
	}
	if h < 0 {
		return old, nil
	}
	changed := false
	emptied := map[string]bool{} // event keys that lost a block item of ours
	for j := h + 1; j <= block(ls, h) && j < len(ls); j++ {
		l := ls[j]
		if l.blank {
			continue
		}
		body := strings.TrimSpace(l.text)
		if item, ok := strings.CutPrefix(body, "- "); ok && oursItem(item, ours) {
			for k := j - 1; k > h; k-- {
				if !ls[k].blank && ls[k].indent < l.indent {
					emptied[strings.TrimSpace(ls[k].text)] = true
					break
				}
			}
			ls = append(ls[:j], ls[j+1:]...)
			j--
			changed = true
			continue
		}
		colon := strings.Index(body, ": [")
		if colon < 0 || !strings.HasSuffix(body, "]") {
			continue
		}
		items, err := flowItems(body[colon+2:])
		if err != nil {
			continue
		}
		var keep []string
		for _, it := range items {
			if !oursItem(it, ours) {
				keep = append(keep, it)
			}
		}
		if len(keep) == len(items) {
			continue
		}
		changed = true
		nl := l.text[len(strings.TrimRight(l.text, "\r\n")):]
		if len(keep) == 0 {
			ls = append(ls[:j], ls[j+1:]...)
			j--
			continue
		}
		ls[j].text = strings.Repeat(" ", l.indent) + body[:colon+2] + "[" + strings.Join(keep, ", ") + "]" + nl
	}
	if !changed {
		return old, nil
	}
	// An event key left with no items goes too.
	for j := h + 1; j < len(ls) && j <= block(ls, h); j++ {
		if emptied[strings.TrimSpace(ls[j].text)] && block(ls, j) == j {
			ls = append(ls[:j], ls[j+1:]...)
			j--
		}
	}
	if block(ls, h) == h {
		nl := ls[h].text[len(strings.TrimRight(ls[h].text, "\r\n")):]
		ls[h].text = "hooks: {}" + nl
	}
	out := joinLines(ls)
	if strings.TrimSpace(string(out)) == "hooks: {}" {
		return nil, nil // install made the file; nothing else is in it
	}
	return out, verifyYAML(old, out, ours)
}

// flowItems splits a one-line flow sequence of flow mappings into the
// items' text.
func flowItems(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("not a flow sequence")
	}
	var out []string
	depth, start := 0, -1
	quote := byte(0)
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '{':
			if depth == 0 {
				start = i
			}
			depth++
		case c == '}':
			depth--
			if depth == 0 && start >= 0 {
				out = append(out, s[start:i+1])
				start = -1
			}
		case depth == 0 && c != ',' && c != ' ':
			return nil, fmt.Errorf("not a list of mappings")
		}
	}
	return out, nil
}

func oursItem(item string, ours Owner) bool {
	var m map[string]any
	if yaml.Unmarshal([]byte(item), &m) != nil {
		return false
	}
	c, _ := m["command"].(string)
	return ours(c)
}

func decodeYAML(b []byte) (map[string]any, error) {
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w; fix the file or register by hand", err)
	}
	return m, nil
}

// yamlHooks maps each event to the command of its entry of ours.
func yamlHooks(b []byte, ours Owner) (map[string]string, error) {
	m, err := decodeYAML(b)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	hs, _ := m["hooks"].(map[string]any)
	for ev, v := range hs {
		items, _ := v.([]any)
		for _, it := range items {
			if t, ok := it.(map[string]any); ok {
				if c, ok := t["command"].(string); ok && ours(c) {
					out[ev] = c
				}
			}
		}
	}
	return out, nil
}

// Scan implements Format.
func (YAMLHooks) Scan(old []byte, ours Owner) ([]Found, error) {
	m, err := decodeYAML(old)
	if err != nil {
		return nil, err
	}
	var out []Found
	hs, _ := m["hooks"].(map[string]any)
	for ev, v := range hs {
		items, _ := v.([]any)
		for _, it := range items {
			if t, ok := it.(map[string]any); ok {
				if c, _ := t["command"].(string); ours(c) {
					out = append(out, Found{Event: ev, Command: c})
				}
			}
		}
	}
	sortFound(out)
	return out, nil
}

func sortFound(fs []Found) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Event < fs[j].Event })
}

// verifyYAML checks that old and out differ only in hooks of ours.
func verifyYAML(old, out []byte, ours Owner) error {
	a, err := decodeYAML(old)
	if err != nil {
		return err
	}
	var bm map[string]any
	if err := yaml.Unmarshal(out, &bm); err != nil {
		return fmt.Errorf("the edit would break the file (%v); register by hand", err)
	}
	strip := func(m map[string]any) {
		hs, _ := m["hooks"].(map[string]any)
		for ev, v := range hs {
			items, _ := v.([]any)
			keep := notOurs(items, ours)
			if len(keep) == 0 {
				delete(hs, ev)
			} else {
				hs[ev] = keep
			}
		}
		if len(hs) == 0 {
			delete(m, "hooks")
		}
	}
	if a == nil {
		a = map[string]any{}
	}
	if bm == nil {
		bm = map[string]any{}
	}
	strip(a)
	strip(bm)
	if !reflect.DeepEqual(a, bm) {
		return fmt.Errorf("the edit would change more than aep-hook's hooks; register by hand")
	}
	return nil
}
