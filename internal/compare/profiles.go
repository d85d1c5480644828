package compare

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/kvpool/kvpool/internal/harness"
)

// profileKinds are the profiles captured per pool: file kind and the
// /debug/pprof endpoint. All but cpu are taken as deltas over the same
// seconds (?seconds=N), so they describe the step, not the process's life.
var profileKinds = []struct{ Kind, Endpoint string }{
	{"cpu", "profile"}, {"mutex", "mutex"}, {"block", "block"}, {"allocs", "allocs"}, {"heap", "heap"},
}

// Profile-run flags: kvserver samples mutex contention and blocking only
// in profile runs, since sampling costs time the timing runs must not pay.
var profileArgs = []string{"-mutex-profile-fraction", "100", "-block-profile-rate", "10000"}

// diffNodes is how many rows of a diff's -top table the report shows.
const diffNodes = 12

// ProfileSet is one pool's profiles and what the report shows of them.
type ProfileSet struct {
	Variant string
	// Files maps a kind (cpu, mutex, ...) to its .pb.gz, relative to the
	// report's folder.
	Files map[string]string
	// Errors maps a kind to why it was not captured.
	Errors map[string]string
	// Diffs maps cpu and mutex to the table `go tool pprof -top
	// -diff_base=<direct's>` prints (pprofTop).
	Diffs    map[string]string
	DiffErrs map[string]string
	// SVG is the CPU call graph, relative to the report's folder ("" with
	// SVGNote saying why).
	SVG     string
	SVGNote string
}

// captureProfiles takes every profile kind at once over seconds while the
// caller's load runs, into dir as <kind>.pb.gz.
func captureProfiles(ctx context.Context, srv *harness.Server, dir, relDir string, seconds int) *ProfileSet {
	ps := &ProfileSet{Files: map[string]string{}, Errors: map[string]string{}, Diffs: map[string]string{}, DiffErrs: map[string]string{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, k := range profileKinds {
		wg.Go(func() {
			name := k.Kind + ".pb.gz"
			err := srv.Profile(ctx, k.Endpoint, seconds, filepath.Join(dir, name))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				ps.Errors[k.Kind] = err.Error()
				return
			}
			ps.Files[k.Kind] = filepath.Join(relDir, name)
		})
	}
	wg.Wait()
	return ps
}

// pprofTop returns the table `go tool pprof -top -nodecount=12
// -diff_base=base prof` prints (with normalize, `-normalize`: prof is
// first scaled to base's total, so that profiles taken at different rates
// compare by where the time goes rather than by how much there was), less
// its File, Build ID and Time lines. It is computed here rather than by
// running pprof, so that a report needs no Go toolchain on the machine
// that takes it.
func pprofTop(ctx context.Context, base, prof string, normalize bool) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	b, err := readProfile(base)
	if err != nil {
		return "", err
	}
	p, err := readProfile(prof)
	if err != nil {
		return "", err
	}
	d, err := diffProfile(b, p, normalize)
	if err != nil {
		return "", fmt.Errorf("cannot diff %s against %s: %w", prof, base, err)
	}
	top, err := topTable(d, diffNodes)
	if err != nil {
		return "", fmt.Errorf("cannot tabulate %s against %s: %w", prof, base, err)
	}
	return top, nil
}

// dotMissing is the report's note where graphviz is not installed.
const dotMissing = "no call graph: graphviz's `dot` is not installed (`apt-get install graphviz`, or `make compare`, which installs it)"

// goMissing is the report's note where graphviz is installed but no Go
// toolchain is: `go tool pprof` draws the call graph (the diff tables
// need no toolchain).
const goMissing = "no call graph: `go tool pprof` draws it, and `go` is not on PATH (install the Go toolchain, or open the profile where one is)"

// pprofSVG writes prof's call graph as SVG to out with `go tool pprof
// -svg`, which needs graphviz's dot.
func pprofSVG(ctx context.Context, prof, out string) error {
	_, errDot := exec.LookPath("dot")
	_, errGo := exec.LookPath(goCommand)
	switch {
	case errDot != nil && errGo != nil:
		return errors.New(dotMissing + "; nor is the Go toolchain, whose `go tool pprof` draws it")
	case errDot != nil:
		return errors.New(dotMissing)
	case errGo != nil:
		return errors.New(goMissing)
	}
	cmd := exec.CommandContext(ctx, goCommand, "tool", "pprof", "-svg", "-output="+out, prof)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go tool pprof -svg %s: %v: %s", prof, err, strings.TrimSpace(errb.String()))
	}
	return nil
}

// TopRow is one row of a -top table (pprofTop's, or `go tool pprof -top`'s).
type TopRow struct {
	Flat     string  // as printed, e.g. "120ms" or "-0.05s"
	FlatPct  float64 // of the profile's total; negative where the pool spent less
	Function string
}

// parseTop reads the rows of a -top table, pprofTop's or `go tool pprof
// -top`'s: they are the same.
func parseTop(top string) []TopRow {
	var rows []TopRow
	header := false
	for _, line := range strings.Split(top, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "flat" && f[1] == "flat%" {
			header = true
			continue
		}
		if !header || len(f) < 6 {
			continue
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
		if err != nil {
			continue
		}
		// pprof prints the share unsigned; the sign is the flat value's.
		if strings.HasPrefix(f[0], "-") {
			pct = -pct
		}
		rows = append(rows, TopRow{Flat: f[0], FlatPct: pct, Function: strings.Join(f[5:], " ")})
	}
	return rows
}

// largestIncrease is the row with the largest positive flat share, if any:
// what a diff says the pool spends most on beyond the baseline.
func largestIncrease(rows []TopRow) (TopRow, bool) {
	var best TopRow
	found := false
	for _, r := range rows {
		if r.FlatPct > 0 && (!found || r.FlatPct > best.FlatPct) {
			best, found = r, true
		}
	}
	return best, found
}
