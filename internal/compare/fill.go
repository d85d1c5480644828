package compare

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/fill"
)

// fill is the step that gives a workload its filled store (store), and
// what it met (a store that never idled).
func (r *runner) fill(ctx context.Context) (string, outcome, error) {
	s := r.step(nil)
	seed, err := s.store(ctx)
	return seed, s.out, err
}

// store returns a store filled with o.Keys values of o.ValueSize, filling
// it on first use: kvserver (direct) on an empty folder, loadgen's fill,
// stop. Every run then starts on its own copy.
func (r *step) store(ctx context.Context) (string, error) {
	key := fmt.Sprintf("%d-%d", r.o.Keys, r.o.ValueSize)
	if dir, ok := r.stores[key]; ok {
		return dir, nil
	}
	dir := filepath.Join(r.tmp, "store-"+key)
	r.logf("filling a store: %d ids × %d B", r.o.Keys, r.o.ValueSize)
	o := harness.Options{Binary: r.o.Kvserver, Args: []string{"-pool", plan.Baseline}, DataDir: dir, CPUs: r.pl.Server}
	srv, err := harness.Start(ctx, o)
	if err != nil {
		return "", fmt.Errorf("cannot start kvserver to fill the store: %w", err)
	}
	elapsed, rate, err := fillStore(ctx, srv.URL, r.o.Keys, r.o.ValueSize, r.pl.Loader)
	if err == nil {
		r.settle(ctx, srv, "the filled store", settleFill)
	}
	stopErr := srv.Stop(stopTimeout)
	switch {
	case err != nil:
		return "", fmt.Errorf("fill: %w; kvserver's log:\n%s", err, srv.LogTail(10))
	case stopErr != nil:
		return "", fmt.Errorf("kvserver did not stop cleanly after the fill: %w", stopErr)
	}
	r.logf("filled in %.1fs (%.0f PUT/s)", elapsed.Seconds(), rate)
	// Once more, so that what the first server left in its log (the last
	// memtable, which Pebble does not flush at close) is flushed and
	// compacted here rather than by every server started on a copy.
	if srv, err = harness.Start(ctx, o); err != nil {
		return "", fmt.Errorf("cannot restart kvserver on the filled store: %w", err)
	}
	r.settle(ctx, srv, "the filled store, reopened", settleFill)
	if err := srv.Stop(stopTimeout); err != nil {
		return "", fmt.Errorf("kvserver did not stop cleanly on the filled store: %w", err)
	}
	r.stores[key] = dir
	return dir, nil
}

// fillStore PUTs ids 1..keys of valueSize bytes into the server at
// target, the loader on its CPUs (empty: unpinned).
func fillStore(ctx context.Context, target string, keys uint64, valueSize int, cpus cpuset.Set) (elapsed time.Duration, rate float64, err error) {
	cfg := config.Default()
	cfg.Target = target
	cfg.CPUs = cpus
	cfg.Workload.Keys, cfg.Workload.ValueSize = keys, valueSize
	cfg.Progress = 0
	cfg.KeepResults = false
	fr, err := fill.Run(ctx, cfg, fill.Range{From: 1, To: keys}, nil)
	if err != nil {
		return 0, 0, err
	}
	if !fr.Complete {
		return 0, 0, fmt.Errorf("fill stopped at id %d of %d (%d errors)", fr.ResumeFrom, keys, fr.ErrorCount)
	}
	return fr.Elapsed, fr.AchievedRate(), nil
}
