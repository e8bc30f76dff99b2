package redact

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// eagerPipeline is a pipeline that makes every rule's compiled state and
// compiles every pattern when it is set up, as pipelines did before they
// made a rule's state on its first keyword hit.
func eagerPipeline(opts Options) *Pipeline {
	p := NewPipeline(opts)
	p.eager = true
	return p
}

// lazyTexts are the texts the lazy and eager pipelines are compared on:
// every string of the recorded fixtures (keys included; a line that is not
// JSON as it stands), every corpus case and every rule's samples.
func lazyTexts(t *testing.T) []string {
	t.Helper()
	var texts []string
	err := filepath.WalkDir(filepath.Join("..", "fixtures"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			var v any
			if json.Unmarshal([]byte(line), &v) == nil {
				texts = append(texts, allStrings(v)...)
			} else {
				texts = append(texts, line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range loadCorpus(t) {
		texts = append(texts, c.Text)
	}
	for _, r := range rules() {
		texts = append(append(texts, ruleSamples[r.id].tp...), ruleSamples[r.id].fp...)
	}
	slices.Sort(texts)
	return slices.Compact(texts)
}

// TestLazyMatchesEager holds the rules made on their first keyword hit to
// the rules all made up front: byte-identical output for every text, on
// the hook path's options and with a home, environment values and PII
// kept.
func TestLazyMatchesEager(t *testing.T) {
	texts := lazyTexts(t)
	if len(texts) < 1000 {
		t.Fatalf("only %d texts to compare", len(texts))
	}
	env := map[string]string{"MY_TOKEN": "s3cr3t-v4lue"}
	for _, opts := range []Options{
		{},
		{Home: "/home/dev", SecretEnv: []string{"MY_TOKEN"}, Getenv: func(k string) string { return env[k] }, NoPII: true},
	} {
		lazy, eager := NewPipeline(opts), eagerPipeline(opts)
		for i, s := range texts {
			if raceEnabled && i%8 != 0 {
				continue
			}
			if got, want := lazy.Text(s), eager.Text(s); got != want {
				t.Fatalf("lazy and eager pipelines differ on %q:\nlazy  %q\neager %q", s, got, want)
			}
		}
	}
}

// TestLazyConcurrent runs one fresh pipeline from several goroutines at
// once, so that rules are made by racing first hits (go test -race), on
// the corpus and the rules' samples.
func TestLazyConcurrent(t *testing.T) {
	var texts []string
	for _, c := range loadCorpus(t) {
		texts = append(texts, c.Text)
	}
	for _, r := range rules() {
		texts = append(append(texts, ruleSamples[r.id].tp...), ruleSamples[r.id].fp...)
	}
	eager := eagerPipeline(Options{})
	want := make([]string, len(texts))
	for i, s := range texts {
		want[i] = eager.Text(s)
	}
	lazy := NewPipeline(Options{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(texts); i += 2 {
				if got := lazy.Text(texts[i]); got != want[i] {
					t.Errorf("text %d differs from the eager pipeline's output", i)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// FuzzLazyMatchesEager holds the lazy pipeline to the eager one on any
// text, each run on a fresh lazy pipeline so that the order of first hits
// varies.
func FuzzLazyMatchesEager(f *testing.F) {
	for _, r := range rules() {
		f.Add(ruleSamples[r.id].tp[0])
	}
	f.Add("session_id: abc path=/tmp/x echo hi")
	eager := eagerPipeline(Options{})
	f.Fuzz(func(t *testing.T, s string) {
		lazy := NewPipeline(Options{})
		if got, want := lazy.Text(s), eager.Text(s); got != want {
			t.Fatalf("lazy %q, eager %q", got, want)
		}
	})
}
