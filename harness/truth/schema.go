package truth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schemas validates events against the AEP envelope schema and the payload
// schema of their type, read from the spec's schemas folder at run time.
type Schemas struct {
	dir      string
	envelope *jsonschema.Schema
	mu       sync.Mutex
	types    map[string]*jsonschema.Schema // nil entry: no schema for the type
	c        *jsonschema.Compiler
}

// LoadSchemas compiles the envelope schema in dir (the folder holding
// aep-event.schema.json and types/).
func LoadSchemas(dir string) (*Schemas, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s := &Schemas{dir: dir, types: map[string]*jsonschema.Schema{}, c: c}
	env, err := s.compile(filepath.Join(dir, "aep-event.schema.json"))
	if err != nil {
		return nil, err
	}
	s.envelope = env
	return s, nil
}

// SchemaDir returns the schemas folder: AEP_SCHEMA_DIR, else
// ../shared/aep-spec/schemas beside the module root found from the working
// directory; ok is false when neither exists.
func SchemaDir() (string, bool) {
	if d := os.Getenv("AEP_SCHEMA_DIR"); d != "" {
		_, err := os.Stat(filepath.Join(d, "aep-event.schema.json"))
		return d, err == nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "..", "shared", "aep-spec", "schemas")
			_, err := os.Stat(filepath.Join(d, "aep-event.schema.json"))
			return d, err == nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", false
		}
		dir = up
	}
}

func (s *Schemas) compile(path string) (*jsonschema.Schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", path, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", path, err)
	}
	url := "file://" + filepath.ToSlash(path)
	if err := s.c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", path, err)
	}
	sch, err := s.c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", path, err)
	}
	return sch, nil
}

// typeSchema returns the payload schema of typ, nil when the spec has none
// (vendor extension types).
func (s *Schemas) typeSchema(typ string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.types[typ]; ok {
		return sch, nil
	}
	path := filepath.Join(s.dir, "types", typ+".schema.json")
	if strings.ContainsAny(typ, `/\`) {
		return nil, fmt.Errorf("type %q is not a type name", typ)
	}
	if _, err := os.Stat(path); err != nil {
		s.types[typ] = nil
		return nil, nil
	}
	sch, err := s.compile(path)
	if err != nil {
		return nil, err
	}
	s.types[typ] = sch
	return sch, nil
}

// Validate returns the ways e fails the envelope schema or its type's
// payload schema; a core-namespace type the spec does not register is a
// failure too.
func (s *Schemas) Validate(e Event) []string {
	// Round-trip through JSON so numbers are what a consumer reads.
	b, err := json.Marshal(e)
	if err != nil {
		return []string{err.Error()}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	if err := s.envelope.Validate(v); err != nil {
		bad = append(bad, "envelope: "+oneLine(err))
	}
	typ := str(e, "type")
	sch, err := s.typeSchema(typ)
	switch {
	case err != nil:
		bad = append(bad, err.Error())
	case sch == nil && !strings.HasPrefix(typ, "x."):
		bad = append(bad, fmt.Sprintf("type %q is not registered", typ))
	case sch != nil:
		d, ok := v.(map[string]any)["data"]
		if !ok {
			d = map[string]any{}
		}
		if err := sch.Validate(d); err != nil {
			bad = append(bad, "data: "+oneLine(err))
		}
	}
	return bad
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
