package realagents

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/harness/truth"
)

// replayQwen replays fixtures/qwen-code/recorded/<name>, failing on any
// problem the truth checks find.
func replayQwen(t *testing.T, name string) []truth.Log {
	t.Helper()
	fx, err := LoadFixture(filepath.Join(fixturesDir, "qwen-code", "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	r := Replay(bin, fx, t.TempDir(), schemas(t))
	for _, p := range r.Problems {
		t.Error(p)
	}
	return r.Logs
}

// TestRecordedTodosOnce: Qwen Code fires each todo hook twice per write
// (validation, then postWrite); the record holds one event per todo per
// persisted write, about that todo.
func TestRecordedTodosOnce(t *testing.T) {
	var got []string
	for _, l := range replayQwen(t, "todos") {
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

// TestRecordedQwenResumeBegins: the resumed Qwen process loads its
// instructions before its SessionStart{resume}; that moment already belongs
// to the new AEP session, and the earlier session ends with the turn the
// failed process left open closed, nothing after it.
func TestRecordedQwenResumeBegins(t *testing.T) {
	types := map[bool][]string{} // resumed? → event types in order
	for _, l := range replayQwen(t, "resume") {
		for _, e := range l.Events {
			session, _ := e["session"].(string)
			typ, _ := e["type"].(string)
			resumed := strings.Contains(session, "~r")
			types[resumed] = append(types[resumed], typ)
		}
	}
	if got := types[true]; len(got) < 2 || got[0] != "x.qwen-code.session.instructions_loaded" || got[1] != "session.started" {
		t.Errorf("resumed session begins %q, want its instructions_loaded then session.started", got)
	}
	if got := types[false]; len(got) == 0 || got[len(got)-1] != "run.cancelled" {
		t.Errorf("earlier session %q, want it to end with the open turn's run.cancelled", got)
	}
	if n := strings.Count(strings.Join(types[false], " "), "instructions_loaded"); n != 1 {
		t.Errorf("earlier session holds %d instructions_loaded, want only its own", n)
	}
}
