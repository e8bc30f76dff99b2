//go:build race

package notify

// raceOn: the tests run under the race detector, so the binaries they
// drive (the relay, the notifier) are built with it too.
const raceOn = true
