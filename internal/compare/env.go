package compare

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// readEnvironment fills what can be known before the first step.
func readEnvironment(pl Placement) result.Environment {
	e := result.Environment{
		CPUModel: cpuModel(), Cores: runtime.NumCPU(), GoVersion: goVersion(),
		Pinned: !pl.Shared(), CPUsHow: pl.How, LoadStart: loadAvgText(), Started: time.Now().UTC(),
	}
	if pl.Shared() {
		e.SharedCPUs = pl.Affinity.String()
	} else {
		e.ServerCPUs, e.LoaderCPUs = pl.Server.String(), pl.Loader.String()
	}
	return e
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown (" + runtime.GOARCH + ")"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown (" + runtime.GOARCH + ")"
}

func goVersion() string {
	if out, err := exec.Command(goCommand, "version").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return runtime.Version() + " (loadtest's build; `go` not found)"
}

// goCommand runs `go tool pprof -svg` and `go version`: the CPU call
// graphs need a Go toolchain on PATH (where there is none, the report says
// so); the diff tables do not (pprofdiff).
const goCommand = "go"

// loadAvgText is /proc/loadavg's 1, 5 and 15 minute averages.
func loadAvgText() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// busyCores is how many cores other processes kept busy over window, from
// /proc/stat (the load average still counts this comparison's last step).
func busyCores(ctx context.Context, window time.Duration) (float64, error) {
	busy0, total0, err := cpuTicks()
	if err != nil {
		return 0, err
	}
	self0 := record.ProcessCPU().Total()
	t := time.NewTimer(window)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-t.C:
	}
	busy1, total1, err := cpuTicks()
	if err != nil {
		return 0, err
	}
	self := (record.ProcessCPU().Total() - self0).Seconds()
	if total1 <= total0 {
		return 0, nil
	}
	// Ticks of all CPUs over the window: the share busy times the cores.
	share := float64(busy1-busy0) / float64(total1-total0)
	cores := share*float64(runtime.NumCPU()) - self/window.Seconds()
	return max(cores, 0), nil
}

// cpuTicks reads the aggregate cpu line of /proc/stat: busy and total ticks.
func cpuTicks() (busy, total uint64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("unexpected /proc/stat line %q", line)
	}
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, err
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total, nil
}

// quietWindow is how long each look at the CPU lasts.
const quietWindow = 300 * time.Millisecond

// waitQuiet waits, up to limit, until other processes keep at most
// plan.BusyCores cores busy (as look measures them over a window), and
// returns the busy cores it saw first and last, and whether quiet came.
func waitQuiet(ctx context.Context, limit time.Duration, look func(context.Context, time.Duration) (float64, error)) (first, last float64, quiet bool) {
	deadline := time.Now().Add(limit)
	first = -1
	for {
		b, err := look(ctx, quietWindow)
		if err != nil {
			return 0, 0, true // cannot tell (no /proc/stat, or Ctrl-C): do not wait
		}
		if first < 0 {
			first = b
		}
		if b <= plan.BusyCores {
			return first, b, true
		}
		if !time.Now().Before(deadline) {
			return first, b, false
		}
	}
}

// quietCheck waits before each step, up to wait, while other processes
// keep the cores busy; once quiet failed to come, later steps only look
// until it does, rather than wait in vain before each.
type quietCheck struct {
	wait   time.Duration // 0: no check
	loaded bool
	// look measures other processes' busy cores (nil: busyCores).
	look func(context.Context, time.Duration) (float64, error)
}

// before checks before the step what, and returns what the report must
// note of it ("" for nothing).
func (q *quietCheck) before(ctx context.Context, what string) string {
	if q.wait <= 0 {
		return ""
	}
	limit := q.wait
	if q.loaded {
		limit = 0
	}
	look := q.look
	if look == nil {
		look = busyCores
	}
	first, last, quiet := waitQuiet(ctx, limit, look)
	switch {
	case ctx.Err() != nil:
		return ""
	case quiet:
		q.loaded = false
		if first > plan.BusyCores {
			return fmt.Sprintf("before %s: other processes kept %.1f cores busy; it waited until they kept %.1f", what, first, last)
		}
		return ""
	case !q.loaded:
		q.loaded = true
		return fmt.Sprintf("before %s: other processes kept %.1f cores busy and no quiet came within %v; this and later steps share the CPU (each noted)", what, last, limit)
	}
	return fmt.Sprintf("before %s: still %.1f cores busy with other processes", what, last)
}
