package redact

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/harness/secretcorpus"
)

// corpusCase is one case of testdata/corpus (see [secretcorpus.Load] for
// the format).
type corpusCase = secretcorpus.Case

// loadCorpus reads every testdata/corpus/*.txt file.
func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	cs, err := secretcorpus.Load(filepath.Join("testdata", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// corpusPipeline is the pipeline the corpus runs through: the hook path's
// defaults (PII on, no configured home or environment values).
func corpusPipeline() *Pipeline { return NewPipeline(Options{}) }

// TestCorpus runs every corpus case through the pipeline: no listed secret
// survives, nothing listed to keep is lost, and the negatives come out
// untouched (zero false positives).
func TestCorpus(t *testing.T) {
	cases := loadCorpus(t)
	if len(cases) < 300 {
		t.Errorf("corpus has %d cases, want at least 300", len(cases))
	}
	p := corpusPipeline()
	var pos, neg, fp int
	for _, c := range cases {
		out := p.Text(c.Text)
		at := c.File + ":" + c.Name
		if c.Clean {
			neg++
			if out != c.Text {
				fp++
				t.Errorf("%s: false positive:\n in %q\nout %q", at, c.Text, out)
			}
			continue
		}
		pos++
		for _, s := range c.Secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s: secret %q survived:\n%q", at, s, out)
			}
		}
		for _, k := range c.Keep {
			if !strings.Contains(out, k) {
				t.Errorf("%s: lost %q:\n%q", at, k, out)
			}
		}
	}
	t.Logf("corpus: %d cases, %d with secrets, %d negatives, %d false positives", len(cases), pos, neg, fp)
}

// promptForms are the shapes in which the mappings put a command into a
// permission card: Claude Code / Codex / Qwen ("Permission requested: TOOL
// — COMMAND (DESCRIPTION)"), OpenCode ("Permission requested: KIND —
// TITLE") and a card whose command is the whole prompt.
var promptForms = []struct{ before, after string }{
	{"Permission requested: Bash — ", " (Run the deploy step)"},
	{"Permission requested: bash — ", ""},
	{"", " (write the config)"},
}

// TestPromptSameAsText proves that a permission prompt and any other text
// field get the same redaction: every corpus case, put into each prompt
// shape, comes out as the case's own redaction inside the same words.
func TestPromptSameAsText(t *testing.T) {
	p := corpusPipeline()
	cases := loadCorpus(t)
	for _, c := range cases {
		if _, lone := loneSpan(c.Text); lone {
			continue // a token is alone only as a whole text, never inside a card
		}
		want := p.Text(c.Text)
		for _, f := range promptForms {
			got := p.Text(f.before + c.Text + f.after)
			if got != f.before+want+f.after {
				t.Errorf("%s:%s in %q...%q:\n got %q\nwant %q", c.File, c.Name, f.before, f.after, got, f.before+want+f.after)
			}
		}
	}
}
