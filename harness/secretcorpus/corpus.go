// Package secretcorpus reads the redaction corpus (redact/testdata/corpus):
// texts with the secrets redaction must remove and the words it must keep,
// and benign near-misses that must come out untouched. The redact package's
// own tests and the process tests of the built binary read it the same way.
package secretcorpus

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Case is one corpus case: a text and what redaction must do to it. A case
// with secrets must lose every one of them; a clean case (a negative) must
// come out byte for byte as it went in.
type Case struct {
	File, Name string
	Line       int
	Text       string
	Secrets    []string // substrings that must not survive
	Keep       []string // substrings that must survive
	Clean      bool
}

// Dir is the corpus folder relative to the module root.
const Dir = "redact/testdata/corpus"

// Load reads every *.txt file of dir. The format, one case after another:
//
//	=== NAME
//	secret: SUBSTRING     (repeatable; none and "clean" make a negative)
//	keep: SUBSTRING       (repeatable)
//	clean
//	text:                 (the text follows, up to the next "=== " line)
//	text-json: "..."      (or the text as one JSON string, for control bytes)
//
// Lines starting with "#" before a case's text are comments.
func Load(dir string) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no corpus files in %s: %v", dir, err)
	}
	var out []Case
	for _, f := range files {
		cs, err := loadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

func loadFile(f string) ([]Case, error) {
	b, err := os.ReadFile(f)
	if err != nil {
		return nil, err
	}
	var out []Case
	var c *Case
	var body []string
	inText := false
	flush := func() error {
		if c == nil {
			return nil
		}
		if inText {
			for len(body) > 0 && body[len(body)-1] == "" {
				body = body[:len(body)-1] // the blank lines between cases
			}
			c.Text = strings.Join(body, "\n")
		}
		if c.Text == "" {
			return fmt.Errorf("%s:%d %q: no text", f, c.Line, c.Name)
		}
		if c.Clean == (len(c.Secrets) > 0) {
			return fmt.Errorf("%s:%d %q: a case is clean or has secrets, not both or neither", f, c.Line, c.Name)
		}
		out = append(out, *c)
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "=== "); ok {
			if err := flush(); err != nil {
				return nil, err
			}
			c, body, inText = &Case{File: filepath.Base(f), Name: name, Line: n}, nil, false
			continue
		}
		switch {
		case c == nil || (!inText && (line == "" || strings.HasPrefix(line, "#"))):
		case inText:
			body = append(body, line)
		case line == "text:":
			inText = true
		case line == "clean":
			c.Clean = true
		case strings.HasPrefix(line, "secret: "):
			c.Secrets = append(c.Secrets, strings.TrimPrefix(line, "secret: "))
		case strings.HasPrefix(line, "keep: "):
			c.Keep = append(c.Keep, strings.TrimPrefix(line, "keep: "))
		case strings.HasPrefix(line, "text-json: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "text-json: ")), &c.Text); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", f, n, err)
			}
		default:
			return nil, fmt.Errorf("%s:%d: unknown line %q", f, n, line)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}
