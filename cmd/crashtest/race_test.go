//go:build race

package main

// raceEnabled: the kvserver under test is built with -race too, which
// reuses the packages this test run already compiled that way.
const raceEnabled = true
