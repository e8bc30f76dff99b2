package truth

import (
	"fmt"
	"io"
	"os"
	"testing"
)

// Found loads the schemas from SchemaDir. Without the folder it returns
// nil and says so on log: events are then not schema-checked.
func Found(log io.Writer) (*Schemas, error) {
	dir, ok := SchemaDir()
	if !ok {
		fmt.Fprintln(log, "AEP schemas not found (AEP_SCHEMA_DIR): events not schema-checked")
		return nil, nil
	}
	return LoadSchemas(dir)
}

// For is Found for a test: the missing folder is logged, and fails the
// test under CI=true, where the schemas are mandatory.
func For(t testing.TB) *Schemas {
	t.Helper()
	if _, ok := SchemaDir(); !ok && os.Getenv("CI") == "true" {
		t.Fatal("AEP schemas not found (AEP_SCHEMA_DIR); mandatory under CI=true")
	}
	s, err := Found(logWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// logWriter writes to a test's log.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
