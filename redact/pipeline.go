package redact

// Options configures a [Pipeline].
type Options struct {
	Home      string              // the home directory prefix replaced by "~"; "" for none
	SecretEnv []string            // names of environment variables whose values are secrets
	Getenv    func(string) string // looks the names up; nil means no values
	NoPII     bool                // disable rule (d), e-mail addresses and phone numbers
}

// Pipeline is the AEP-0003 §9.4 text redaction pipeline. Its rules compile
// on first use, so a process that never redacts pays nothing for them. A
// Pipeline is safe for concurrent use.
type Pipeline struct {
	opts Options
}

// NewPipeline returns a pipeline for opts. It compiles nothing.
func NewPipeline(opts Options) *Pipeline { return &Pipeline{opts: opts} }

// Text redacts free text.
func (p *Pipeline) Text(s string) string {
	// TODO(redact): the §9.4 rules. Placeholder drops everything.
	return "[REDACTED]"
}

// Value walks a decoded JSON value: strings under credential-named keys are
// replaced whole, other strings pass [Pipeline.Text], numbers, booleans and
// nulls stay, keys are never rewritten.
func (p *Pipeline) Value(v any) any {
	switch t := v.(type) {
	case string:
		return p.Text(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = p.Value(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = p.Value(x)
		}
		return out
	}
	return v
}
