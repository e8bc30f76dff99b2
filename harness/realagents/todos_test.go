package realagents

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestRecordedTodosOnce: Qwen Code fires each todo hook twice per write
// (validation, then postWrite); the record holds one event per todo per
// persisted write, about that todo.
func TestRecordedTodosOnce(t *testing.T) {
	fx, err := LoadFixture(filepath.Join(fixturesDir, "qwen-code", "recorded", "todos"))
	if err != nil {
		t.Fatal(err)
	}
	r := Replay(bin, fx, t.TempDir(), schemas(t))
	for _, p := range r.Problems {
		t.Error(p)
	}
	var got []string
	for _, l := range r.Logs {
		for _, e := range l.Events {
			if typ, _ := e["type"].(string); typ == "progress.task.planned" || typ == "progress.task.completed" {
				subject, _ := e["subject"].(string)
				got = append(got, typ+" "+subject)
			}
		}
	}
	want := []string{"progress.task.planned 1", "progress.task.planned 2", "progress.task.completed 1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("todo events %q, want %q", got, want)
	}
}
