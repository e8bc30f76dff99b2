package deliver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestSeekEnd: a destination with no cursor in a log starts past its last
// complete line (a fragment waits), and then ships only what follows; one
// with a cursor keeps it.
func TestSeekEnd(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, "logs")
	os.MkdirAll(filepath.Join(root, "a"), 0o700)
	log := filepath.Join(root, "a", "s.jsonl")
	os.WriteFile(log, []byte("{\"n\":1}\n{\"n\":2}\n{\"n\":"), 0o600)
	d := Destination{Kind: AEP, Raw: "local"}
	rec := &recordSender{}
	s := &Shipper{Home: home, LogRoot: root, Dests: []Destination{d}}
	s.SetSender(d, rec)
	off, err := s.SeekEnd(context.Background(), d, "a/s.jsonl")
	if err != nil || off != 16 {
		t.Fatalf("SeekEnd = %d %v", off, err)
	}
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("3}\n")
	f.Close()
	if _, err := s.ShipLog(context.Background(), d, "a/s.jsonl"); err != nil {
		t.Fatal(err)
	}
	if len(rec.lines) != 1 || string(rec.lines[0]) != "{\"n\":3}\n" {
		t.Errorf("shipped %q", rec.lines)
	}
	if off, err := s.SeekEnd(context.Background(), d, "a/s.jsonl"); err != nil || off != 24 {
		t.Errorf("a second SeekEnd moved the cursor: %d %v", off, err)
	}
	if off, err := s.SeekEnd(context.Background(), d, "a/missing.jsonl"); err != nil || off != 0 {
		t.Errorf("missing log: %d %v", off, err)
	}
}

type recordSender struct{ lines [][]byte }

func (r *recordSender) Send(_ context.Context, lines [][]byte) error {
	r.lines = append(r.lines, lines...)
	return nil
}
