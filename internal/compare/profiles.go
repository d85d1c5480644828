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
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/pprofdiff"
)

// ProfilesDir holds profiles/<variant>/<kind>.pb.gz in a comparison's
// folder, the layout `make pprof-diff` reads.
const ProfilesDir = "profiles"

// profiles is the step of the profile runs: per variant, a separate
// kvserver with mutex and block sampling on at the fixed step's rate,
// every profile kind captured at once; then, whatever ctx says, the diffs
// against direct's and the CPU call graphs (diffProfiles).
func (r *runner) profiles(ctx context.Context, wr *result.WorkloadResult, seed string) ([]*result.ProfileSet, outcome) {
	s := r.step(wr)
	var sets []*result.ProfileSet
	secs := s.t.ProfileSeconds
	for i, v := range wr.Variants {
		if ctx.Err() != nil {
			break
		}
		rel := filepath.Join(ProfilesDir, v.Variant.Slug())
		dir := filepath.Join(s.dir, rel)
		s.quiet(ctx, "profile run "+v.Name)
		srv := s.start(ctx, wr.Workload, s.out.variants[i], "profile", seed, dir, plan.ProfileArgs...)
		if srv == nil {
			continue
		}
		cfg := s.loadConfig(srv)
		// The load starts with the captures and outlasts them by a second.
		cfg.Rate, cfg.Duration = plan.FixedShare*s.planner().refRate(wr, v), profileLoad(secs)
		s.logf("%s %s: profiles over %ds at %.0f req/s", wr.Workload, v.Name, secs, cfg.Rate)
		loadDone := make(chan error, 1)
		go func() {
			_, err := engine.Run(ctx, cfg, nil)
			loadDone <- err
		}()
		ps := captureProfiles(ctx, srv.Server, dir, rel, secs)
		ps.Variant = v.Name
		<-loadDone
		s.died(ctx, srv, "profile")
		s.stop(ctx, srv, "profile")
		if ctx.Err() != nil {
			break
		}
		sets = append(sets, ps)
	}
	s.diffProfiles(context.WithoutCancel(ctx), sets)
	return sets, s.out
}

// diffProfiles diffs every pool's cpu and mutex profiles in sets against
// direct's and draws each CPU call graph, completing each set.
func (r *step) diffProfiles(ctx context.Context, sets []*result.ProfileSet) {
	var base *result.ProfileSet
	for _, ps := range sets {
		if ps.Variant == plan.Baseline {
			base = ps
		}
	}
	svgNoted := false
	for _, ps := range sets {
		if cpu, ok := ps.Files["cpu"]; ok {
			svg := strings.TrimSuffix(cpu, ".pb.gz") + ".svg"
			if err := pprofSVG(ctx, filepath.Join(r.dir, cpu), filepath.Join(r.dir, svg)); err != nil {
				ps.SVGNote = err.Error()
				if !svgNoted {
					r.note("%v", err)
					svgNoted = true
				}
			} else {
				ps.SVG = svg
			}
		}
		if base == nil || ps == base {
			continue
		}
		for _, kind := range []string{"cpu", "mutex"} {
			b, okb := base.Files[kind]
			p, okp := ps.Files[kind]
			if !okb || !okp {
				ps.DiffErrs[kind] = "not captured for both this pool and direct"
				continue
			}
			top, err := pprofdiff.Top(ctx, filepath.Join(r.dir, b), filepath.Join(r.dir, p), r.p.OwnRates)
			if err != nil {
				ps.DiffErrs[kind] = err.Error()
				continue
			}
			ps.Diffs[kind] = top
		}
	}
}

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
