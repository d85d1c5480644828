package harness

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcSample is the server's resource use at one moment.
type ProcSample struct {
	At       time.Time
	RSSBytes int64         // resident memory
	CPU      time.Duration // user + system CPU time since the start
}

// userHZ is the unit of the CPU times in /proc/PID/stat: the kernel's
// USER_HZ, 100 on every Linux architecture Go supports (procfs assumes
// the same).
const userHZ = 100

// Sample reads the server's CPU time and resident memory from
// /proc/PID/stat and /proc/PID/statm (Linux only). Two samples around a
// run give its CPU per request; RSS over time shows memory growth.
func (s *Server) Sample() (ProcSample, error) {
	if !s.Running() {
		return ProcSample{}, fmt.Errorf("kvserver (pid %d) has exited: nothing to sample", s.PID)
	}
	return sampleProc(fmt.Sprintf("/proc/%d", s.PID), time.Now())
}

func sampleProc(dir string, at time.Time) (ProcSample, error) {
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return ProcSample{}, fmt.Errorf("cannot sample kvserver: %w (needs Linux's /proc)", err)
	}
	statm, err := os.ReadFile(dir + "/statm")
	if err != nil {
		return ProcSample{}, fmt.Errorf("cannot sample kvserver: %w (needs Linux's /proc)", err)
	}
	cpu, err := parseStatCPU(string(stat))
	if err != nil {
		return ProcSample{}, err
	}
	rss, err := parseStatmRSS(string(statm), int64(os.Getpagesize()))
	if err != nil {
		return ProcSample{}, err
	}
	return ProcSample{At: at, RSSBytes: rss, CPU: cpu}, nil
}

// parseStatCPU returns utime+stime from the text of /proc/PID/stat. The
// command name (field 2) is in parentheses and may hold spaces and
// parentheses itself, so fields are counted from the last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("cannot parse /proc/PID/stat %q: no ')' after the command name", stat)
	}
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("cannot parse /proc/PID/stat %q: %d fields after the command name, want at least 13", stat, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cannot parse /proc/PID/stat CPU time %q: %w", f, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / userHZ), nil
}

// parseStatmRSS returns the resident set from the text of /proc/PID/statm
// (its second field, in pages).
func parseStatmRSS(statm string, pageSize int64) (int64, error) {
	fields := strings.Fields(statm)
	if len(fields) < 2 {
		return 0, fmt.Errorf("cannot parse /proc/PID/statm %q: want at least 2 fields", statm)
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cannot parse /proc/PID/statm resident pages %q: %w", fields[1], err)
	}
	return pages * pageSize, nil
}

// Idle is what WaitIdle calls idle: the server used under IdleShare of one
// core in each of its caller's number of consecutive windows of
// IdleWindow. A server just started on a copy of a filled store may spend
// its first seconds replaying its log and compacting; measured then, it
// would be measured under its own background work. IdleWindows is the
// count for a store that may still be compacting (just filled);
// SettledWindows for a start on a copy of a store that already idled,
// where the wait only has to catch the exception: a compaction runs for
// seconds, so one second of quiet is enough to tell it is not running.
const (
	IdleWindow     = 500 * time.Millisecond
	IdleWindows    = 4
	SettledWindows = 2
	IdleShare      = 0.05
)

// WaitIdle waits until the server has been idle for windows windows in a
// row (see IdleWindow) and returns how long that took; an error if it was
// not idle within, exited, or ctx ended.
func (s *Server) WaitIdle(ctx context.Context, windows int, within time.Duration) (time.Duration, error) {
	read := func() (time.Duration, error) {
		p, err := s.Sample()
		return p.CPU, err
	}
	tick := func() error {
		t := time.NewTimer(IdleWindow)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.exited:
			return fmt.Errorf("kvserver (pid %d) exited while waiting for it to idle", s.PID)
		case <-t.C:
			return nil
		}
	}
	return waitIdle(read, tick, windows, within)
}

// waitIdle is WaitIdle over cpu (the process's CPU time so far) and tick
// (blocks for one IdleWindow, or fails): it counts windows, not the clock.
func waitIdle(cpu func() (time.Duration, error), tick func() error, windows int, within time.Duration) (time.Duration, error) {
	busy := time.Duration(IdleShare * float64(IdleWindow))
	last, err := cpu()
	if err != nil {
		return 0, err
	}
	quiet := 0
	for n := 1; ; n++ {
		if err := tick(); err != nil {
			return time.Duration(n-1) * IdleWindow, err
		}
		now, err := cpu()
		if err != nil {
			return time.Duration(n) * IdleWindow, err
		}
		if now-last < busy {
			quiet++
		} else {
			quiet = 0
		}
		last = now
		waited := time.Duration(n) * IdleWindow
		if quiet >= windows {
			return waited, nil
		}
		if waited >= within {
			return waited, fmt.Errorf("kvserver still busy after %v (more than %.0f %% of a core in one of the last %d windows of %v)", within, 100*IdleShare, windows, IdleWindow)
		}
	}
}
