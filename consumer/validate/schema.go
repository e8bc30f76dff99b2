package validate

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// schemaText is the project's own description of the AEP 0.1 registry and
// payload schemas (see schema.txt for the form). TestSchemaMatchesSpec
// renders the published schemas (AEP_SCHEMA_DIR) into the same form and
// fails on any difference, so the two cannot drift.
//
//go:embed schema.txt
var schemaText string

// field is one payload member's schema.
type field struct {
	types    []string // JSON types: string integer number boolean object array; empty: enum or any
	enum     []string // allowed values, JSON-encoded
	capture  int      // minimum capture level (index into captureLevels)
	required bool
	min, max *float64
	format   string
	props    map[string]*field // members of an object
	order    []string          // props in declaration order
	items    *field            // element schema of an array
	when     *when             // a conditional requirement on an object
}

// when is `if key == value then require these`.
type when struct {
	key, value string
	require    []string
}

// typeSpec is one registered type.
type typeSpec struct {
	status, scope string
	schema        bool // a payload schema is registered
	data          *field
}

// Schema is the parsed registry.
type Schema struct {
	categories map[string]bool
	severity   []string
	capture    []string
	foreign    map[string]bool // foreign-emitter session types (no seq)
	types      map[string]*typeSpec
	revision   string
}

// captureLevels are the capture levels in order (AEP-0001 §8.2).
var captureLevels = []string{"none", "metadata", "redacted", "full"}

func levelOf(s string) int {
	for i, l := range captureLevels {
		if l == s {
			return i
		}
	}
	return -1
}

// loaded is the embedded schema, parsed on first use.
var loaded = sync.OnceValues(func() (*Schema, error) { return ParseSchema(schemaText) })

// ParseSchema reads the description form:
//
//	revision <text>
//	categories <name>...
//	severity <level>...   (in order)
//	capture <level>...    (in order)
//	foreign <type>...     (session events that carry no seq)
//	type <name> <status> <scope> schema|-
//	  <path> <types|enum|any> <capture> [required] [enum=a|b] [min=N] [max=N] [format=F]
//	  <path> when <key>=<value> require <member>...
//
// A path names a member of data; "/" descends into an object, "[]" into
// an array's elements (options[]/id).
func ParseSchema(text string) (*Schema, error) {
	s := &Schema{categories: map[string]bool{}, foreign: map[string]bool{}, types: map[string]*typeSpec{}}
	var cur *typeSpec
	for n, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "" {
			continue
		}
		w := strings.Fields(line)
		bad := func(msg string) error { return fmt.Errorf("schema.txt:%d: %s", n+1, msg) }
		if !strings.HasPrefix(line, " ") {
			switch w[0] {
			case "revision":
				s.revision = strings.Join(w[1:], " ")
			case "categories":
				for _, c := range w[1:] {
					s.categories[c] = true
				}
			case "severity":
				s.severity = w[1:]
			case "capture":
				s.capture = w[1:]
			case "foreign":
				for _, t := range w[1:] {
					s.foreign[t] = true
				}
			case "type":
				if len(w) != 5 {
					return nil, bad("type wants: name status scope schema|-")
				}
				cur = &typeSpec{status: w[2], scope: w[3], schema: w[4] != "-", data: &field{types: []string{"object"}, props: map[string]*field{}}}
				s.types[w[1]] = cur
			default:
				return nil, bad("unknown directive " + w[0])
			}
			continue
		}
		if cur == nil || len(w) < 2 {
			return nil, bad("member line outside a type")
		}
		f, err := cur.data.at(w[0])
		if err != nil {
			return nil, bad(err.Error())
		}
		if w[1] == "when" {
			if len(w) < 5 || w[3] != "require" {
				return nil, bad("when wants: key=value require member...")
			}
			k, v, _ := strings.Cut(w[2], "=")
			f.when = &when{key: k, value: v, require: w[4:]}
			continue
		}
		if len(w) < 3 {
			return nil, bad("member wants: path types capture")
		}
		if w[1] != "any" && w[1] != "enum" {
			f.types = strings.Split(w[1], "|")
		}
		if f.capture = levelOf(w[2]); f.capture < 0 {
			return nil, bad("unknown capture level " + w[2])
		}
		for _, opt := range w[3:] {
			k, v, _ := strings.Cut(opt, "=")
			switch k {
			case "required":
				f.required = true
			case "enum":
				f.enum = strings.Split(v, "|")
			case "min", "max":
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return nil, bad(err.Error())
				}
				if k == "min" {
					f.min = &x
				} else {
					f.max = &x
				}
			case "format":
				f.format = v
			default:
				return nil, bad("unknown option " + opt)
			}
		}
	}
	return s, nil
}

// at returns (creating) the field at path below f.
func (f *field) at(path string) (*field, error) {
	cur := f
	for _, seg := range strings.Split(path, "/") {
		name, arr := strings.CutSuffix(seg, "[]")
		if name != "" {
			if cur.props == nil {
				cur.props = map[string]*field{}
			}
			next, ok := cur.props[name]
			if !ok {
				next = &field{}
				cur.props[name] = next
				cur.order = append(cur.order, name)
			}
			cur = next
		}
		if arr {
			if cur.items == nil {
				cur.items = &field{}
			}
			cur = cur.items
		}
	}
	return cur, nil
}
