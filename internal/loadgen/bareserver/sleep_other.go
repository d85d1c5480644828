//go:build !linux

package bareserver

import "time"

// sleep is time.Sleep where nanosleep(2) is not wired up (see sleep_linux.go).
func sleep(d time.Duration) { time.Sleep(d) }
