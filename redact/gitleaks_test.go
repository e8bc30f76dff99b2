package redact

import (
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
)

// gitleaks is a test-only dependency: the differential below measures
// aep-hook's rules against gitleaks v8.30.1's default rule set on the
// project's corpus. It is never linked into the binary
// (TestGitleaksNotLinked), because building its detector compiles its whole
// rule set in every process that does.

// newGitleaks returns gitleaks' default detector, decoding encoded
// segments as its command line does (--max-decode-depth 5).
func newGitleaks(t testing.TB) *detect.Detector {
	t.Helper()
	logging.Logger = zerolog.Nop()
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatalf("gitleaks default config: %v", err)
	}
	d.MaxDecodeDepth = 5
	return d
}

// encodedToken returns the blank-delimited token of text at a decoded
// finding's position: the encoded form gitleaks decoded the secret from.
func encodedToken(text string, f report.Finding) string {
	lines := strings.Split(text, "\n")
	if f.StartLine < 0 || f.StartLine >= len(lines) {
		return ""
	}
	line := lines[f.StartLine]
	at := min(max(f.StartColumn-1, 0), len(line)-1)
	if f.StartLine > 0 {
		at = min(max(f.StartColumn-2, 0), len(line)-1)
	}
	if at < 0 {
		return ""
	}
	st, en := at, at
	for st > 0 && !isSpace(line[st-1]) && line[st-1] != '"' && line[st-1] != '\'' {
		st--
	}
	for en < len(line) && !isSpace(line[en]) && line[en] != '"' && line[en] != '\'' {
		en++
	}
	if strings.HasSuffix(line[st:en], ":") && en < len(line) {
		// A rule matching key and value reports the key's column: the
		// encoded form is the value after it.
		st = en
		for st < len(line) && (isSpace(line[st]) || line[st] == '"' || line[st] == '\'') {
			st++
		}
		for en = st; en < len(line) && !isSpace(line[en]) && line[en] != '"' && line[en] != '\''; en++ {
		}
	}
	return line[st:en]
}

// TestGitleaksDifferential asserts that every secret gitleaks finds in the
// corpus's cases with secrets is also removed by aep-hook (what it finds in
// a negative is its false positive, listed), and reports the coverage: how many of
// gitleaks' default rules fire on the corpus and how many corpus secrets
// aep-hook removes that gitleaks does not see.
func TestGitleaksDifferential(t *testing.T) {
	d := newGitleaks(t)
	p := corpusPipeline()
	fired := map[string]int{}
	found, removed, beyond, positives := 0, 0, 0, 0
	var gitleaksFP []string
	for _, c := range loadCorpus(t) {
		out := p.Text(c.Text)
		fs := d.DetectString(c.Text)
		for _, f := range fs {
			found++
			fired[f.RuleID]++
			at := c.File + ":" + c.Name + " (" + f.RuleID + ")"
			if c.Clean {
				// A negative holds no secret: a finding there is one of
				// gitleaks' false positives, which TestCorpus keeps out.
				gitleaksFP = append(gitleaksFP, at)
				continue
			}
			ok := f.Secret != "" && !strings.Contains(out, f.Secret)
			if !strings.Contains(c.Text, f.Secret) { // decoded from base64, hex or percent escapes
				tok := encodedToken(c.Text, f)
				ok = ok && tok != "" && !strings.Contains(out, tok)
			}
			if !ok {
				t.Errorf("%s: gitleaks finds %q, aep-hook leaves it:\n%q", at, f.Secret, out)
				continue
			}
			removed++
		}
		if !c.Clean {
			positives++
			if len(fs) == 0 {
				beyond++
			}
		}
	}
	var silent []string
	for id := range d.Config.Rules {
		if fired[id] == 0 {
			silent = append(silent, id)
		}
	}
	sort.Strings(silent)
	t.Logf("gitleaks v8.30.1: %d of %d default rules fire on the corpus; %d findings, %d removed by aep-hook", len(fired), len(d.Config.Rules), found, removed)
	t.Logf("gitleaks findings in negatives (its false positives, kept by aep-hook): %d %v", len(gitleaksFP), gitleaksFP)
	t.Logf("corpus cases with secrets gitleaks finds nothing in (aep-hook removes them all): %d of %d", beyond, positives)
	t.Logf("gitleaks rules that do not fire (path-only rules cannot fire on text): %s", strings.Join(silent, " "))
}

// TestGitleaksNotLinked asserts gitleaks stays a test-only dependency: the
// binary's package graph does not hold it.
func TestGitleaksNotLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../cmd/aep-hook").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "gitleaks") || strings.Contains(pkg, "spf13/viper") {
			t.Errorf("the binary links %s", pkg)
		}
	}
}
