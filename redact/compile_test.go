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
// default hook path builds no table and compiles no pattern. Its
// identifiers (tool and server names, ids, digests) are ordinary, so the
// token rules names pass ([Name]) are not built either.
func TestMetadataPathCompilesNothing(t *testing.T) {
	p := NewPipeline(Options{})
	args := map[string]any{"command": "mysql -pS3cret && curl -u a:b https://x?token=ghp_0123456789abcdefghijABCDEFGHIJ012345"}
	tool := map[string]any{"name": "mcp__github__create_issue", "call_id": "toolu_0100"}
	contents := []Content{
		{Type: "tool.requested", Subject: "mcp__github__create_issue", Data: map[string]any{"tool": tool, "args": args, "args_digest": "1df8bccaec747dc615b50678f35bf5b5"}},
		{Type: "attention.requested", Agent: "a", Subject: "Bash", Data: map[string]any{"kind": "permission", "prompt": args["command"]}},
		{Type: "attention.resolved", Subject: "01M8SVVQFQ0M4WBNE7TVFKVAZB", Data: map[string]any{"resolution": "answered"}},
		{Type: "attention.answered", Data: map[string]any{"answer": map[string]any{"text": "pw", "values": map[string]any{"pin": "1234", "n": float64(2)}}}},
		{Type: "x.vendor.thing.done", Data: map[string]any{"raw": args, "model": "claude-opus-4-1-20250805"}, Levels: map[string]Level{"raw": Redacted, "model": Metadata}},
	}
	for _, c := range contents {
		out, _ := Gate(c, Metadata, p)
		delete(out, "prompt") // synthesized from the agent, the kind and the subject's Name
		for _, s := range append(allStrings(out), c.Subject) {
			if nameSuspect(s) {
				t.Errorf("%s: the identifier %q would build the token rules", c.Type, s)
			}
		}
	}
	if p.index != nil || p.refs != nil {
		t.Error("the metadata path initialised the pipeline")
	}
}

// allStrings returns every string of a decoded value, keys included.
func allStrings(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case map[string]any:
		var out []string
		for k, x := range t {
			out = append(append(out, k), allStrings(x)...)
		}
		return out
	case []any:
		var out []string
		for _, x := range t {
			out = append(out, allStrings(x)...)
		}
		return out
	}
	return nil
}
