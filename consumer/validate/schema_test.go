package validate

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/installer"
)

var update = flag.Bool("update", false, "rewrite schema.txt from the schemas in AEP_SCHEMA_DIR")

// schemaDir is the published schemas' folder, or skip.
func schemaDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AEP_SCHEMA_DIR")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("AEP_SCHEMA_DIR is not set under CI")
		}
		t.Skip("AEP_SCHEMA_DIR not set (make test sets it)")
	}
	return dir
}

// TestSchemaMatchesSpec renders the published registry and payload schemas
// into schema.txt's form and compares: the embedded description must say
// exactly what the schemas say. `go test ./validate -run
// TestSchemaMatchesSpec -update` (with AEP_SCHEMA_DIR) rewrites it.
func TestSchemaMatchesSpec(t *testing.T) {
	want, err := renderSpec(schemaDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("schema.txt", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if schemaText != want {
		t.Fatalf("schema.txt has drifted from %s; review and run with -update:\n%s",
			os.Getenv("AEP_SCHEMA_DIR"), installer.Diff("schema.txt", []byte(schemaText), []byte(want)))
	}
	if _, err := ParseSchema(schemaText); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t string, v any) error {
	b, err := os.ReadFile(t)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// renderSpec is the published schemas in the description form.
func renderSpec(dir string) (string, error) {
	var b strings.Builder
	var types struct {
		AEP   string `json:"aep"`
		Types []struct {
			Type, Status, Scope string
			Schema              *string
		} `json:"types"`
	}
	var cats struct {
		Categories []struct{ Name string } `json:"categories"`
	}
	var sev, capt struct {
		Order []string `json:"order"`
	}
	var env map[string]any
	for f, v := range map[string]any{"registry/types.json": &types, "registry/categories.json": &cats,
		"registry/severity.json": &sev, "registry/capture.json": &capt, "aep-event.schema.json": &env} {
		if err := readJSON(filepath.Join(dir, f), v); err != nil {
			return "", err
		}
	}
	b.WriteString("# aep-hook's own description of the AEP registry and payload schemas: the facts\n")
	b.WriteString("# validate checks, in the form validate/schema.go reads. TestSchemaMatchesSpec\n")
	b.WriteString("# compares it with the published schemas (AEP_SCHEMA_DIR) on every test run.\n")
	fmt.Fprintf(&b, "revision AEP %s registry\n", types.AEP)
	b.WriteString("categories")
	for _, c := range cats.Categories {
		if c.Name != "x" {
			b.WriteString(" " + c.Name)
		}
	}
	b.WriteString("\nseverity " + strings.Join(sev.Order, " ") + "\n")
	b.WriteString("capture " + strings.Join(capt.Order, " ") + "\n")
	// The foreign-emitter alternatives of the envelope's else/if pattern.
	pat := dig(env, "allOf", 0, "else", "if", "properties", "type", "pattern")
	p, _ := pat.(string)
	m := regexp.MustCompile(`^\^\((.*)\)\$$`).FindStringSubmatch(p)
	if m == nil {
		return "", fmt.Errorf("envelope foreign-emitter pattern not found (%q)", p)
	}
	b.WriteString("foreign " + strings.Join(strings.Split(m[1], "|"), " ") + "\n")
	for _, ty := range types.Types {
		schema := "-"
		if ty.Schema != nil {
			schema = "schema"
		}
		fmt.Fprintf(&b, "type %s %s %s %s\n", ty.Type, ty.Status, ty.Scope, schema)
		if ty.Schema == nil {
			continue
		}
		var s map[string]any
		if err := readJSON(filepath.Join(dir, "types", *ty.Schema), &s); err != nil {
			return "", err
		}
		renderProps(&b, "", s)
	}
	return b.String(), nil
}

func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// renderProps writes one line per member of object schema s, recursing.
func renderProps(b *strings.Builder, prefix string, s map[string]any) {
	props, _ := s["properties"].(map[string]any)
	req := map[string]bool{}
	for _, r := range asList(s["required"]) {
		req[r.(string)] = true
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := props[k].(map[string]any)
		renderField(b, prefix+k, p, req[k])
	}
	if iff, ok := s["if"].(map[string]any); ok {
		then, _ := s["then"].(map[string]any)
		for key, c := range iff["properties"].(map[string]any) {
			v, _ := json.Marshal(c.(map[string]any)["const"])
			var reqs []string
			for _, r := range asList(then["required"]) {
				reqs = append(reqs, r.(string))
			}
			fmt.Fprintf(b, "  %s when %s=%s require %s\n", strings.TrimSuffix(prefix, "/"), key, v, strings.Join(reqs, " "))
		}
	}
}

func renderField(b *strings.Builder, path string, p map[string]any, required bool) {
	typ := "any"
	switch t := p["type"].(type) {
	case string:
		typ = t
	case []any:
		var ts []string
		for _, x := range t {
			ts = append(ts, x.(string))
		}
		typ = strings.Join(ts, "|")
	default:
		if p["enum"] != nil || p["const"] != nil {
			typ = "enum"
		}
	}
	capture, _ := p["x-aep-capture"].(string)
	if capture == "" {
		capture = "metadata" // AEP-0002 §5.1 rule 4
	}
	line := []string{path, typ, capture}
	if required {
		line = append(line, "required")
	}
	enum := asList(p["enum"])
	if c, ok := p["const"]; ok {
		enum = []any{c}
	}
	if len(enum) > 0 {
		var es []string
		for _, e := range enum {
			j, _ := json.Marshal(e)
			es = append(es, string(j))
		}
		line = append(line, "enum="+strings.Join(es, "|"))
	}
	for _, k := range []string{"minimum", "maximum"} {
		if v, ok := p[k].(float64); ok {
			line = append(line, k[:3]+"="+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	if f, ok := p["format"].(string); ok {
		line = append(line, "format="+f)
	}
	fmt.Fprintf(b, "  %s\n", strings.Join(line, " "))
	if _, ok := p["properties"]; ok {
		renderProps(b, path+"/", p)
	}
	if items, ok := p["items"].(map[string]any); ok {
		renderField(b, path+"[]", items, false)
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
