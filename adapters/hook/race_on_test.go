//go:build race

package hook

// raceEnabled: the race detector makes every memory access costly, so the
// tests that show linear cost at scale use smaller inputs under it.
const raceEnabled = true
