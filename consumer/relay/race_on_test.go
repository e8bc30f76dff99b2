//go:build race

package relay_test

// raceOn: the tests run under the race detector, so the binary they drive
// is built with it too (the relay's own goroutines are what it must see).
const raceOn = true
