//go:build !race

package answer_test

const raceOn = false
