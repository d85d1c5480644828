//go:build race

package harnesstest

const raceEnabled = true
