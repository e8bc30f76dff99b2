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
	return Metadata, fmt.Errorf("capture level %q: want none, metadata, redacted or full", Setting(s))
}
