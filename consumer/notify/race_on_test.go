//go:build race

package notify_test

// raceOn: the tests run under the race detector, so the binaries they
// drive (the relay, the notifier) are built with it too.
const raceOn = true
