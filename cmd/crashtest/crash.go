package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// cycle is one kill -9 and what the restart found.
type cycle struct {
	ran   time.Duration // writers ran this long before the kill
	log   writeLog
	acked readBack // the keys answered 201
	doubt readBack // the keys whose PUT was cut off by the kill
}

// runCrash kills the server -cycles times under -writers concurrent PUTs
// and reads back every acknowledged key after each restart, then all of
// them once more at the end. It reports whether the promises held: no
// acknowledged key lost (with -sync) and no key ever read back wrong.
func runCrash(ctx context.Context, cfg config, out io.Writer) (passed bool, err error) {
	name := "nosync"
	if cfg.sync {
		name = "sync"
	}
	s, err := newSession(cfg, name, out)
	if err != nil {
		return false, err
	}
	defer func() { s.close(passed && err == nil) }()

	fmt.Fprintf(out, "crash: kvserver -sync=%t -pool %s, %d writers, %d cycles, SIGKILL %v..%v after the writers start (seed %d)\n",
		cfg.sync, cfg.pool, cfg.writers, cfg.cycles, cfg.minRun, cfg.maxRun, cfg.seed)
	if err := s.start(ctx); err != nil {
		return false, err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "cycle\tran\tacknowledged\tverified\tlost\twrong\tin doubt\tof them stored\t")
	var cycles []cycle
	var allAcked []string
	for i := range cfg.cycles {
		c, err := crashCycle(ctx, s, i)
		if err != nil {
			tw.Flush()
			return false, fmt.Errorf("cycle %d: %w", i+1, err)
		}
		cycles = append(cycles, c)
		allAcked = append(allAcked, c.log.acked...)
		fmt.Fprintf(tw, "%d\t%v\t%d\t%d\t%d\t%d\t%d\t%d\t\n", i+1, c.ran.Round(time.Millisecond),
			len(c.log.acked), c.acked.exact, len(c.acked.missing), len(c.acked.wrong), len(c.log.inDoubt), c.doubt.exact)
	}
	tw.Flush()

	// Later recoveries must not have undone earlier ones.
	final, err := verify(ctx, newClient(cfg.writers), s.srv.URL, allAcked, cfg.writers)
	if err != nil {
		return false, err
	}
	lost, wrong := len(final.missing), len(final.wrong)
	for _, c := range cycles {
		wrong += len(c.doubt.wrong) + len(c.acked.wrong)
	}
	fmt.Fprintf(out, "all cycles: %d acknowledged, %d read back exactly after the last restart, %d lost, %d wrong\n",
		final.checked, final.exact, lost, wrong)
	if !cfg.sync {
		fmt.Fprintf(out, "lost per kill -9 without -sync: %v (acknowledged writes still in kvserver's memory when it died)\n", lostPerCycle(cycles))
	}
	for _, k := range firstFew(final.missing) {
		fmt.Fprintf(out, "  lost: %s\n", k)
	}
	passed = wrong == 0 && (lost == 0 || !cfg.sync)
	return passed, nil
}

// crashCycle runs the writers against the current server, kills it at a
// random moment, restarts it and reads back what the writers sent.
func crashCycle(ctx context.Context, s *session, i int) (cycle, error) {
	c := cycle{ran: s.runFor()}
	client := newClient(s.cfg.writers)
	wctx, stopWriters := context.WithCancel(ctx)
	done := make(chan writeLog, 1)
	go func() { done <- writeUntil(wctx, client, s.srv.URL, "crash", i, s.cfg.writers) }()
	sleepCtx(ctx, c.ran)
	s.srv.Kill() // first: every 201 the writers hold was sent before this
	stopWriters()
	c.log = <-done
	client.CloseIdleConnections()
	if err := ctx.Err(); err != nil {
		return c, err
	}
	if len(c.log.acked) == 0 {
		return c, fmt.Errorf("no write acknowledged in %v: nothing to check (answers: %v)", c.ran, c.log.byCode)
	}

	if err := s.start(ctx); err != nil {
		return c, err
	}
	client = newClient(s.cfg.writers)
	defer client.CloseIdleConnections()
	var err error
	if c.acked, err = verify(ctx, client, s.srv.URL, c.log.acked, s.cfg.writers); err != nil {
		return c, err
	}
	c.doubt, err = verify(ctx, client, s.srv.URL, c.log.inDoubt, s.cfg.writers)
	return c, err
}

func lostPerCycle(cycles []cycle) []int {
	lost := make([]int, len(cycles))
	for i, c := range cycles {
		lost[i] = len(c.acked.missing)
	}
	return lost
}

func firstFew(keys []string) []string {
	return keys[:min(len(keys), 5)]
}
