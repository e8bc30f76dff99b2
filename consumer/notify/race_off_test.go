//go:build !race

package notify_test

const raceOn = false
