//go:build race

package answer_test

// raceOn: the tests run under the race detector, so the binary they drive
// is built with it too.
const raceOn = true
