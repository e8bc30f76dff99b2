// Package redact enforces AEP capture ceilings: the per-field capture levels
// of every registered payload type (AEP-0002 §5), ceilings with per-category
// overrides, down-leveling of events from elsewhere (AEP-0001 §8.2), the
// metadata synthesis of the starred fields, digests (AEP-0003 §9.3) and the
// AEP-0003 §9.4 text redaction pipeline with its structured-value walker.
//
// The package knows no vendor. The emitter calls [Gate] for every event it
// builds, which is the one place content can leave the process.
package redact

import "fmt"

// Level is an AEP capture level (AEP-0001 §8.2), ordered from least to most
// content.
type Level int8

// The four capture levels, in order.
const (
	None Level = iota
	Metadata
	Redacted
	Full
)

var levelNames = [...]string{"none", "metadata", "redacted", "full"}

// String returns the level's wire spelling.
func (l Level) String() string {
	if l < None || l > Full {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return levelNames[l]
}

// ParseLevel parses a wire spelling ("none", "metadata", "redacted", "full").
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if s == n {
			return Level(i), nil
		}
	}
	return Metadata, fmt.Errorf("capture level %q: want none, metadata, redacted or full", s)
}
