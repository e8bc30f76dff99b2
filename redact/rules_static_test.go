package redact

import (
	"slices"
	"strings"
	"testing"
)

// proseKeywords are the keywords of the prose rule: its nouns.
func proseKeywords() []string {
	out := make([]string, len(proseNouns))
	for i, n := range proseNouns {
		out[i] = n.word
	}
	return out
}

// printerKeywords are the keywords of the command-output rule: each
// printer's first word, and the two commands that print a variable.
func printerKeywords() []string {
	out := []string{"printenv ", "echo "}
	for _, p := range secretPrinters {
		w, _, _ := strings.Cut(p.words, " ")
		if w += " "; !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// TestSpelledKeywords holds the keyword lists the context table spells
// out (a call there would run at every process start) to the tables they
// come from.
func TestSpelledKeywords(t *testing.T) {
	want := map[string][]string{
		"prose-credential":      proseKeywords(),
		"secret-command-output": printerKeywords(),
	}
	for _, r := range contextRuleTable {
		if kw, ok := want[r.id]; ok {
			if !slices.Equal(r.keywords, kw) {
				t.Errorf("rule %s keywords = %q, want %q", r.id, r.keywords, kw)
			}
			delete(want, r.id)
		}
	}
	for id := range want {
		t.Errorf("no rule %s in contextRuleTable", id)
	}
}
