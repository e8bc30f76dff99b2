//go:build !race

package relaytest

const race = false
