package render

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

func writeCharts(b *page, charts []Chart) {
	b.printf("%s\n\n", HeadCharts)
	if len(charts) == 0 {
		b.printf("No chart: no step produced the numbers one needs.\n\n")
		return
	}
	for _, ch := range charts {
		b.printf("### %s\n\n![%s](%s)\n\n%s\n\n", ch.Title, ch.Title, ch.Path, ch.Caption)
	}
}

// writeProfiles lists each pool's profiles, its CPU call graph and its
// diffs against direct's. dir is where the report is written: the
// profiles are there, but for a published copy, whose raw profiles
// stayed in the run's folder (named, not linked).
func writeProfiles(b *page, c *result.Comparison, dir string) {
	b.printf("%s\n\n", HeadProfiles)
	if len(c.Profiles) == 0 {
		b.printf("No profiles in this preset or run.\n\n")
		return
	}
	run := dir
	if c.Published != nil {
		run = c.Published.From
	}
	diffs := "Each pool's CPU and mutex profiles are diffed against direct's: positive rows are what the pool costs beyond running in the handler. "
	if c.Plan.OwnRates {
		diffs = "Each pool's CPU and mutex profiles are diffed against direct's, scaled first to direct's total (`-normalize`, as each ran at its own rate): positive rows are where the pool spends a larger share of its time than direct does. "
	}
	b.printf("Taken during a fixed-rate step at %.0f %% of %s (workload `%s`) of a separate profile run per pool, kvserver started with `%s`. "+
		diffs+
		"Dig further with `go tool pprof -http=: -diff_base=<direct's> <pool's>` or `make pprof-diff RUN=%s A=direct B=<pool> PROFILE=cpu`.\n\n",
		100*plan.FixedShare, refName(c.Plan), c.ProfileWorkload, strings.Join(plan.ProfileArgs, " "), run)
	for _, ps := range c.Profiles {
		b.printf("### %s\n\n", ps.Variant)
		var files []string
		for _, kind := range plan.ProfileKinds {
			switch f, ok := ps.Files[kind]; {
			case ok && c.Published != nil:
				files = append(files, kind)
			case ok:
				files = append(files, fmt.Sprintf("[%s](%s)", kind, f))
			default:
				if e, ok := ps.Errors[kind]; ok {
					files = append(files, fmt.Sprintf("%s: not captured (%s)", kind, e))
				}
			}
		}
		b.printf("Profiles: %s.\n\n", strings.Join(files, ", "))
		if ps.SVG != "" {
			b.printf("CPU call graph: [%s](%s)\n\n", filepath.Base(ps.SVG), ps.SVG)
		} else if ps.SVGNote != "" {
			b.printf("CPU call graph: %s.\n\n", ps.SVGNote)
		}
		for _, kind := range []string{"cpu", "mutex"} {
			if d, ok := ps.Diffs[kind]; ok {
				b.printf("`go tool pprof -top -diff_base=direct` (%s):\n\n```\n%s\n```\n\n", kind, d)
			} else if e, ok := ps.DiffErrs[kind]; ok {
				b.printf("%s diff against direct: %s\n\n", kind, e)
			}
		}
	}
}
