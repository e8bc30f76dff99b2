package attrmatch

import (
	"sort"
	"strings"
)

// Keys lists the attributes the filter has predicates on, sorted, each
// once.
func (f Filter) Keys() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range f.preds {
		if !seen[p.key] {
			seen[p.key] = true
			out = append(out, p.key)
		}
	}
	sort.Strings(out)
	return out
}

// Globs lists the predicates that hold a wildcard where the dialect takes
// none, as "key=value": a "*" in an equality value, on any key but a type
// pattern's trailing ".*" (AEP-0003 §6.1: patterns apply to type only).
// Such a value is lawful equality on the wire, but it matches only events
// whose attribute holds that very "*", which is never what a person typing
// agent=codex* meant; a command line refuses it.
func (f Filter) Globs() []string {
	var out []string
	for _, p := range f.preds {
		for _, v := range p.any {
			if s, ok := v.(string); ok && strings.Contains(s, "*") {
				out = append(out, p.key+"="+s)
			}
		}
		for _, pre := range p.prefixes {
			if strings.Contains(pre, "*") {
				out = append(out, p.key+"="+pre+"*")
			}
		}
	}
	return out
}
