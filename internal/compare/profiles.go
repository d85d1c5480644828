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
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/harness"
)

// ProfilesDir holds profiles/<variant>/<kind>.pb.gz in a comparison's
// folder, the layout `make pprof-diff` reads.
const ProfilesDir = "profiles"

// endpoint is the /debug/pprof endpoint of a profile kind. All but cpu
// are taken as deltas over the same seconds (?seconds=N), so they
// describe the step, not the process's life.
func endpoint(kind string) string {
	if kind == "cpu" {
		return "profile"
	}
	return kind
}

// profileLoad is how long a profile run's load lasts: it starts with the
// captures and outlasts them by a quarter second, time enough for the
// captures' requests to reach kvserver on the same machine; a longer
// tail only lengthens every profile run.
func profileLoad(seconds int) time.Duration {
	return time.Duration(seconds)*time.Second + 250*time.Millisecond
}

// captureProfiles takes every profile kind at once over seconds while the
// caller's load runs, into dir as <kind>.pb.gz.
func captureProfiles(ctx context.Context, srv *harness.Server, dir, relDir string, seconds int) *result.ProfileSet {
	ps := &result.ProfileSet{Files: map[string]string{}, Errors: map[string]string{}, Diffs: map[string]string{}, DiffErrs: map[string]string{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, kind := range plan.ProfileKinds {
		wg.Go(func() {
			name := kind + ".pb.gz"
			err := srv.Profile(ctx, endpoint(kind), seconds, filepath.Join(dir, name))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				ps.Errors[kind] = err.Error()
				return
			}
			ps.Files[kind] = filepath.Join(relDir, name)
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
