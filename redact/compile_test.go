package redact

import (
	"regexp/syntax"
	"testing"
)

// maxRepeat is the largest counted repetition a pattern may hold: RE2
// compiles x{n,m} into m copies of x, so a large bound costs every process
// whose payload hits the rule.
const maxRepeat = 64

// TestPatternsCheapToCompile keeps the patterns cheap to compile on a
// hook's first call: no counted repetition above maxRepeat, no lazy
// repetition (RE2 compiles them far more slowly) except where a rule needs
// the shortest match.
func TestPatternsCheapToCompile(t *testing.T) {
	lazyOK := map[string]bool{"pem-block": true}
	for _, r := range rules() {
		for _, pat := range []string{r.pattern, r.inner} {
			if pat == "" {
				continue
			}
			re, err := syntax.Parse(pat, syntax.Perl)
			if err != nil {
				t.Fatalf("%s: %v", r.id, err)
			}
			var walk func(*syntax.Regexp)
			walk = func(x *syntax.Regexp) {
				switch x.Op {
				case syntax.OpRepeat:
					if x.Max > maxRepeat {
						t.Errorf("%s: repetition {%d,%d} above %d: write {%d,}", r.id, x.Min, x.Max, maxRepeat, x.Min)
					}
				case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
					if x.Flags&syntax.NonGreedy != 0 && !lazyOK[r.id] {
						t.Errorf("%s: lazy repetition %s", r.id, x)
					}
				}
				for _, s := range x.Sub {
					walk(s)
				}
			}
			walk(re)
		}
	}
}

// TestMetadataPathCompilesNothing gates content full of credentials at
// metadata and asserts the pipeline was never even initialised: the
// default hook path builds no table and compiles no pattern.
func TestMetadataPathCompilesNothing(t *testing.T) {
	p := NewPipeline(Options{})
	args := map[string]any{"command": "mysql -pS3cret && curl -u a:b https://x?token=ghp_0123456789abcdefghijABCDEFGHIJ012345"}
	for _, c := range []Content{
		{Type: "tool.requested", Data: map[string]any{"tool": map[string]any{"name": "Bash"}, "args": args}},
		{Type: "attention.requested", Agent: "a", Data: map[string]any{"kind": "permission", "prompt": args["command"]}},
		{Type: "attention.answered", Data: map[string]any{"answer": map[string]any{"text": "pw", "values": map[string]any{"pin": "1234", "n": float64(2)}}}},
		{Type: "x.vendor.thing.done", Data: map[string]any{"raw": args}, Levels: map[string]Level{"raw": Redacted}},
	} {
		Gate(c, Metadata, p)
	}
	if p.index != nil || p.rules != nil {
		t.Error("the metadata path initialised the pipeline")
	}
}
