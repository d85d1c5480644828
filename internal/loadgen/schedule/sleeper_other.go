//go:build !linux

package schedule

func NewSleeper() Sleeper { return coarseSleeper{} }
