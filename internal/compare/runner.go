package compare

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/render"
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
	// quietness waits for a quiet machine before each step.
	quietness quietCheck
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
// keep the cores busy (quietCheck), noting it.
func (r *runner) quiet(ctx context.Context, what string) {
	if n := r.quietness.before(ctx, what); n != "" {
		r.note("%s", n)
	}
}

// runDir is the folder of one step's run, and its path relative to the
// report.
func (r *runner) runDir(wl string, v *result.VariantResult, step string) (abs, rel string) {
	rel = filepath.Join("runs", render.Slug(wl), v.Variant.Slug(), step)
	return filepath.Join(r.c.Dir, rel), rel
}

// onlineCPUs is how many CPUs this machine has online.
func onlineCPUs() int {
	if s, err := cpuset.Online(); err == nil && s.Len() > 0 {
		return s.Len()
	}
	return runtime.NumCPU()
}
