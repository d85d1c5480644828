package compare

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
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

// ProfileSet is one pool's profiles and what the report shows of them.
type ProfileSet struct {
	Variant string
	// Files maps a kind (cpu, mutex, ...) to its .pb.gz, relative to the
	// report's folder.
	Files map[string]string
	// Errors maps a kind to why it was not captured.
	Errors map[string]string
	// Diffs maps cpu and mutex to the table `go tool pprof -top
	// -diff_base=<direct's>` prints (pprofdiff.Top).
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
