// Package pprofdiff computes what `go tool pprof -top -diff_base` prints,
// in-process, so that a report needs no Go toolchain on the machine that
// takes it: read from github.com/google/pprof's internal/report and
// internal/graph, on the public profile package. Top diffs two profile
// files; ParseTop reads the rows of such a table (this package's or
// pprof's own: they are the same).
package pprofdiff

import (
	"context"
	"fmt"
	"os"

	"github.com/google/pprof/profile"
)

func readProfile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("cannot read profile %s: %w", path, err)
	}
	return p, nil
}

// diffProfile is what pprof's -diff_base makes of two profiles
// (internal/driver's fetchProfiles): base's samples are marked as the
// base, scaled by -1 and merged with p's, so that each function's value
// is p's less base's while the report's total stays base's. With
// normalize p is first scaled so that its total is base's. base and p
// are modified.
func diffProfile(base, p *profile.Profile, normalize bool) (*profile.Profile, error) {
	base.SetLabel(diffBaseLabel, []string{"true"})
	if normalize {
		if err := p.Normalize(base); err != nil {
			return nil, err
		}
	}
	base.Scale(-1)
	ps := []*profile.Profile{p, base}
	if err := profile.CompatibilizeSampleTypes(ps); err != nil {
		return nil, err
	}
	d, err := profile.Merge(ps)
	if err != nil {
		return nil, err
	}
	if err := d.RemoveUninteresting(); err != nil {
		return nil, err
	}
	return d, nil
}

// Nodes is how many rows a table of Top shows (pprof's -nodecount).
const Nodes = 12

// Top returns the table `go tool pprof -top -nodecount=12
// -diff_base=base prof` prints (with normalize, `-normalize`: prof is
// first scaled to base's total, so that profiles taken at different rates
// compare by where the time goes rather than by how much there was), less
// its File, Build ID and Time lines.
func Top(ctx context.Context, base, prof string, normalize bool) (string, error) {
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
	top, err := topTable(d, Nodes)
	if err != nil {
		return "", fmt.Errorf("cannot tabulate %s against %s: %w", prof, base, err)
	}
	return top, nil
}
