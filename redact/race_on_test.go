//go:build race

package redact

// raceEnabled: the race detector slows the pipeline tenfold, and the
// comparisons over every fixture string take a sample of them.
const raceEnabled = true
