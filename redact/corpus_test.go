package redact

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusCase is one case of testdata/corpus: a text and what redaction must
// do to it. A case with secrets must lose every one of them; a clean case
// (a negative) must come out byte for byte as it went in.
type corpusCase struct {
	file, name string
	line       int
	text       string
	secrets    []string // substrings that must not survive
	keep       []string // substrings that must survive
	clean      bool
}

// loadCorpus reads every testdata/corpus/*.txt file. The format, one case
// after another:
//
//	=== NAME
//	secret: SUBSTRING     (repeatable; none and "clean" make a negative)
//	keep: SUBSTRING       (repeatable)
//	clean
//	text:                 (the text follows, up to the next "=== " line)
//	text-json: "..."      (or the text as one JSON string, for control bytes)
//
// Lines starting with "#" before a case's text are comments.
func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	var out []corpusCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c *corpusCase
		var body []string
		inText := false
		flush := func() {
			if c == nil {
				return
			}
			if inText {
				for len(body) > 0 && body[len(body)-1] == "" {
					body = body[:len(body)-1] // the blank lines between cases
				}
				c.text = strings.Join(body, "\n")
			}
			if c.text == "" {
				t.Fatalf("%s:%d %q: no text", f, c.line, c.name)
			}
			if c.clean == (len(c.secrets) > 0) {
				t.Fatalf("%s:%d %q: a case is clean or has secrets, not both or neither", f, c.line, c.name)
			}
			out = append(out, *c)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if name, ok := strings.CutPrefix(line, "=== "); ok {
				flush()
				c, body, inText = &corpusCase{file: filepath.Base(f), name: name, line: n}, nil, false
				continue
			}
			switch {
			case c == nil || (!inText && (line == "" || strings.HasPrefix(line, "#"))):
			case inText:
				body = append(body, line)
			case line == "text:":
				inText = true
			case line == "clean":
				c.clean = true
			case strings.HasPrefix(line, "secret: "):
				c.secrets = append(c.secrets, strings.TrimPrefix(line, "secret: "))
			case strings.HasPrefix(line, "keep: "):
				c.keep = append(c.keep, strings.TrimPrefix(line, "keep: "))
			case strings.HasPrefix(line, "text-json: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "text-json: ")), &c.text); err != nil {
					t.Fatalf("%s:%d: %v", f, n, err)
				}
			default:
				t.Fatalf("%s:%d: unknown line %q", f, n, line)
			}
		}
		flush()
	}
	return out
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
		out := p.Text(c.text)
		at := c.file + ":" + c.name
		if c.clean {
			neg++
			if out != c.text {
				fp++
				t.Errorf("%s: false positive:\n in %q\nout %q", at, c.text, out)
			}
			continue
		}
		pos++
		for _, s := range c.secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s: secret %q survived:\n%q", at, s, out)
			}
		}
		for _, k := range c.keep {
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
		if _, lone := loneToken(c.text); lone {
			continue // a token is alone only as a whole text, never inside a card
		}
		want := p.Text(c.text)
		for _, f := range promptForms {
			got := p.Text(f.before + c.text + f.after)
			if got != f.before+want+f.after {
				t.Errorf("%s:%s in %q...%q:\n got %q\nwant %q", c.file, c.name, f.before, f.after, got, f.before+want+f.after)
			}
		}
	}
}
