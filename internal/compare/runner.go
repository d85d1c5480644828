package compare

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/harness"
)

// runner runs kvserver for a comparison's steps: what it runs (options,
// step lengths, plan: read only), the filled stores, where kvserver and
// the loader run, the report's folder and the log. What the steps measure
// is not its: each step returns it, and runAll alone assembles the
// comparison.
type runner struct {
	o   plan.Options
	t   plan.Timing
	p   *plan.Plan
	dir string // the report's: every step's files go under it
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

// step is the runner while one step runs, with what the step met besides
// its own records (out), which the step returns. Its methods call it r,
// as the runner's do.
type step struct {
	*runner
	out outcome
}

// outcome is what a step returns besides the records of its own kind:
// what it measured of its workload's variants, the failures and notes it
// met, the loader's checks it made and what it saw of the loader and of
// kvserver. runAll adds it to the comparison (add).
type outcome struct {
	// variants are the step's records of wr.Variants, in their order (nil:
	// the step measures no variant of the workload).
	variants []*result.VariantResult
	failures []result.Failure
	notes    []string
	loader   []result.LoaderCheck
	// loops is the most event loops a loader run used; unpinned, where a
	// run could not pin the loader to its CPUs (unpinnedCPUs), why.
	loops                  int
	unpinned, unpinnedCPUs string
	// version is kvserver's, as the first server it started said.
	version string
}

// step begins a step. It records what it measures of wr's variants (nil:
// none) in records of its own (outcome.variants), each begun with only
// what says which kvserver runs: variant, name, kvserver's settings.
func (r *runner) step(wr *result.WorkloadResult) *step {
	s := &step{runner: r}
	if wr == nil {
		return s
	}
	for _, v := range wr.Variants {
		s.out.variants = append(s.out.variants, &result.VariantResult{Variant: v.Variant, Name: v.Name, Config: v.Config})
	}
	return s
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.log, "%s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (r *step) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	r.out.notes = append(r.out.notes, n)
	r.logf("note: %s", n)
}

func (r *step) fail(wl, variant, step, reason, tail string) {
	r.out.failures = append(r.out.failures, result.Failure{Workload: wl, Variant: variant, Step: step, Reason: reason, LogTail: tail})
	r.logf("FAILED %s %s %s: %s", wl, variant, step, reason)
}

// runDir is the folder of one step's run, and its path relative to the
// report.
func (r *runner) runDir(wl string, v *result.VariantResult, step string) (abs, rel string) {
	rel = filepath.Join("runs", plan.Slug(wl), v.Variant.Slug(), step)
	return filepath.Join(r.dir, rel), rel
}

// onlineCPUs is how many CPUs this machine has online.
func onlineCPUs() int {
	if s, err := cpuset.Online(); err == nil && s.Len() > 0 {
		return s.Len()
	}
	return runtime.NumCPU()
}
