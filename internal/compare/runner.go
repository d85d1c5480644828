package compare

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/harness"
)

// runner carries one comparison's state.
type runner struct {
	o   plan.Options
	t   plan.Timing
	p   *plan.Plan
	c   *result.Comparison
	log io.Writer
	// pl is where kvserver and the loader run; online how many CPUs the
	// machine has (a shared server's CPU share is of all of them).
	pl     Placement
	online int
	// loaded is set while other processes keep the machine busy.
	loaded bool
	// look measures other processes' busy cores (nil: busyCores).
	look func(context.Context, time.Duration) (float64, error)
	// onStart, for tests, sees every kvserver a step starts.
	onStart func(step string, v plan.Variant, srv *harness.Server)
	// tmp holds the filled stores; removed at the end.
	tmp    string
	stores map[string]string
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.log, "%s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (r *runner) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	r.c.Notes = append(r.c.Notes, n)
	r.logf("note: %s", n)
}

func (r *runner) fail(wl, variant, step, reason, tail string) {
	r.c.Failures = append(r.c.Failures, result.Failure{Workload: wl, Variant: variant, Step: step, Reason: reason, LogTail: tail})
	r.logf("FAILED %s %s %s: %s", wl, variant, step, reason)
}

// quiet waits before a step, up to -quiet-wait, while other processes
// keep the cores busy, noting it. Once quiet failed to come, later steps
// only look (no wait) until the machine is quiet again: waiting a minute
// before every step of a busy machine would only make the run longer.
func (r *runner) quiet(ctx context.Context, what string) {
	if r.o.QuietWait <= 0 {
		return
	}
	limit := r.o.QuietWait
	if r.loaded {
		limit = 0
	}
	look := r.look
	if look == nil {
		look = busyCores
	}
	first, last, quiet := waitQuiet(ctx, limit, look)
	switch {
	case ctx.Err() != nil:
	case quiet && first > plan.BusyCores:
		r.note("before %s: other processes kept %.1f cores busy; it waited until they kept %.1f", what, first, last)
		r.loaded = false
	case quiet:
		r.loaded = false
	case !r.loaded:
		r.note("before %s: other processes kept %.1f cores busy and no quiet came within %v; this and later steps share the CPU (each noted)", what, last, limit)
		r.loaded = true
	default:
		r.note("before %s: still %.1f cores busy with other processes", what, last)
	}
}

// slug makes a workload name safe for a folder.
func slug(s string) string { return strings.NewReplacer(":", "", "/", "-", " ", "-").Replace(s) }

// runDir is the folder of one step's run, and its path relative to the
// report.
func (r *runner) runDir(wl string, v *result.VariantResult, step string) (abs, rel string) {
	rel = filepath.Join("runs", slug(wl), v.Variant.Slug(), step)
	return filepath.Join(r.c.Dir, rel), rel
}

// serverSet is the CPU set v's kvserver starts on: the server's set, or
// under the scaling preset its first v.CPUs CPUs (of the affinity set
// where the two share); empty: not pinned.
func (r *runner) serverSet(v plan.Variant) cpuset.Set {
	set := r.pl.Server
	if v.CPUs > 0 {
		if set.IsEmpty() {
			set = r.pl.Affinity
		}
		return set.First(v.CPUs)
	}
	return set
}

// onlineCPUs is how many CPUs this machine has online.
func onlineCPUs() int {
	if s, err := cpuset.Online(); err == nil && s.Len() > 0 {
		return s.Len()
	}
	return runtime.NumCPU()
}
