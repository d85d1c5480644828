//go:build !linux

package schedule

func NewSleeper() sleeper { return coarseSleeper{} }
