//go:build !race

package harnesstest

const raceEnabled = false
