//go:build !linux

package loadgen

func newSleeper() sleeper { return coarseSleeper{} }
