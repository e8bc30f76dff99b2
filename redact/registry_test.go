package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// schemaDir finds the AEP schemas: AEP_SCHEMA_DIR, else
// ../shared/aep-spec/schemas beside the module root. Without them the test
// skips, or fails under CI=true.
// registry is the whole capture table, built once for the tests.
var registry = sync.OnceValue(buildRegistry)

func schemaDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AEP_SCHEMA_DIR")
	if dir == "" {
		root, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
				break
			}
			up := filepath.Dir(root)
			if up == root {
				t.Fatal("module root not found")
			}
			root = up
		}
		dir = filepath.Join(root, "..", "shared", "aep-spec", "schemas")
	}
	if _, err := os.Stat(filepath.Join(dir, "types")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("AEP schemas not found at %s", dir)
		}
		t.Skipf("AEP schemas not found at %s", dir)
	}
	return dir
}

type schemaNode struct {
	Capture    string                 `json:"x-aep-capture"`
	Comment    string                 `json:"$comment"`
	Type       any                    `json:"type"`
	Properties map[string]*schemaNode `json:"properties"`
	Items      *schemaNode            `json:"items"`
	Required   []string               `json:"required"`
}

// TestRegistryMatchesSchemas reads every published payload schema and checks
// the capture table against it, member by member, so the two never drift.
func TestRegistryMatchesSchemas(t *testing.T) {
	dir := schemaDir(t)
	reg := registry()
	files, err := filepath.Glob(filepath.Join(dir, "types", "*.schema.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in %s", dir)
	}
	seen := map[string]bool{}
	for _, f := range files {
		typ := strings.TrimSuffix(filepath.Base(f), ".schema.json")
		seen[typ] = true
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var root schemaNode
		if err := json.Unmarshal(raw, &root); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		spec, ok := reg[typ]
		if !ok {
			t.Errorf("%s: type missing from the capture table", typ)
			continue
		}
		compareProps(t, typ, root.Properties, root.Required, spec)
	}
	for typ := range reg {
		if !seen[typ] {
			t.Errorf("%s: in the capture table but has no schema", typ)
		}
	}
	// Every registered type with a schema is covered (types.json).
	var idx struct {
		Types []struct {
			Type   string  `json:"type"`
			Schema *string `json:"schema"`
		} `json:"types"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "registry", "types.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	for _, e := range idx.Types {
		if _, ok := reg[e.Type]; ok != (e.Schema != nil) {
			t.Errorf("%s: table presence %v, schema %v", e.Type, ok, e.Schema != nil)
		}
	}
}

func compareProps(t *testing.T, path string, props map[string]*schemaNode, required []string, spec fields) {
	t.Helper()
	for name, n := range props {
		p := path + "." + name
		f, ok := spec[name]
		if !ok {
			t.Errorf("%s: missing from the table", p)
			continue
		}
		want := Metadata
		if n.Capture != "" {
			l, err := ParseLevel(n.Capture)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			want = l
		}
		if f.level != want {
			t.Errorf("%s: table level %v, schema %v", p, f.level, want)
		}
		if f.star != notStarred && !strings.Contains(n.Comment, "exception") && !strings.Contains(n.Comment, "gating") {
			t.Errorf("%s: starred in the table, no exception in the schema", p)
		}
		if f.star == notStarred && strings.Contains(n.Comment, "by exception") {
			t.Errorf("%s: schema gates by exception, table does not star it", p)
		}
		if f.required != slices.Contains(required, name) {
			t.Errorf("%s: table required %v", p, f.required)
		}
		if f.pair != "" {
			if tw := props[f.pair]; tw == nil || tw.Capture != "redacted" {
				t.Errorf("%s: twin %s not redacted in the schema", p, f.pair)
			}
		}
		switch {
		case n.Items != nil && n.Items.Properties != nil:
			if !f.items {
				t.Errorf("%s: schema has an array of objects", p)
				continue
			}
			compareProps(t, p+"[]", n.Items.Properties, n.Items.Required, f.props)
		case n.Properties != nil:
			if f.items || f.props == nil {
				t.Errorf("%s: schema has an object with members", p)
				continue
			}
			compareProps(t, p, n.Properties, n.Required, f.props)
		default:
			if f.props != nil {
				t.Errorf("%s: table has members the schema does not", p)
			}
		}
	}
	for name := range spec {
		if _, ok := props[name]; !ok {
			t.Errorf("%s.%s: in the table, not in the schema", path, name)
		}
	}
}

// TestSpecIsTheRegistry: the per-type lookup the gate uses gives each
// type's annotation as the whole table has it, and nothing for others.
func TestSpecIsTheRegistry(t *testing.T) {
	for typ, want := range registry() {
		got, ok := spec(typ)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: annotation differs from the table's (known %v)", typ, ok)
		}
	}
	if _, ok := spec("no.such.type"); ok {
		t.Error("an unknown type has an annotation")
	}
}
