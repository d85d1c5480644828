package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/lincheck"
)

// setup is one configuration: kvserver's flags and the clients' workload.
type setup struct {
	name      string
	args      []string // kvserver flags besides -addr and -data
	readers   int
	writers   int
	keys      int
	valueSize int
	// deleteOneIn: one write in this many is a DELETE (0: none).
	deleteOneIn int
	// restart: kill -9 kvserver in the middle of the run and start it
	// again on the same data.
	restart bool
}

// requestTimeout bounds each client request; a write that outlasts it is
// in doubt.
const requestTimeout = 10 * time.Second

// setups are make lincheck's configurations. The hot-key ones write no
// DELETE: with 32 writers on a key, an Absent that DELETEs write again and
// again leaves porcupine orders of reads it cannot tell apart (no read of
// Absent says which DELETE it saw), and it could not decide such histories
// in a minute; "deletes" has them, spread over more keys.
var setups = []setup{
	{name: "hot", readers: 32, writers: 32, keys: 4, valueSize: 4 << 10},
	{name: "hot-sync", args: []string{"-sync"}, readers: 32, writers: 32, keys: 4, valueSize: 4 << 10},
	{name: "large", readers: 32, writers: 32, keys: 4, valueSize: 64 << 10},
	{name: "large-sync", args: []string{"-sync"}, readers: 32, writers: 32, keys: 4, valueSize: 64 << 10},
	{name: "one-hot-key", args: []string{"-sync", "-pool", "direct"}, readers: 32, writers: 32, keys: 1, valueSize: 4 << 10},
	{name: "deletes", readers: 32, writers: 32, keys: 16, valueSize: 4 << 10, deleteOneIn: 4},
	{name: "restart", args: []string{"-sync"}, readers: 32, writers: 32, keys: 4, valueSize: 4 << 10, restart: true},
}

func setupNamed(name string) (setup, bool) {
	for _, s := range setups {
		if s.name == name {
			return s, true
		}
	}
	return setup{}, false
}

func (s setup) describe() string {
	args := "kvserver's defaults"
	if len(s.args) > 0 {
		args = "kvserver " + strings.Join(s.args, " ")
	}
	d := fmt.Sprintf("%s; %d readers + %d writers over %s, %d B values", args, s.readers, s.writers, count(s.keys, "key"), s.valueSize)
	if s.deleteOneIn > 0 {
		d += fmt.Sprintf(", 1 write in %d a DELETE", s.deleteOneIn)
	}
	if s.restart {
		d += "; kill -9 and restart midway"
	}
	return d
}

// summary is what one configuration's run found.
type summary struct {
	result lincheck.Result
	stats  lincheck.Stats
	epochs int
	ran    time.Duration // the clients' time, epochs and their closing reads
}

func (s summary) passed() bool { return s.result.Verdict == lincheck.OK }

// runSetup starts kvserver on a fresh data directory, runs s's clients in
// epochs (killing and restarting kvserver midway if s says so), stops it
// and checks the histories. The directory and kvserver's log are removed
// unless the run failed or -keep was given.
func runSetup(ctx context.Context, o options, s setup, out io.Writer) (sum summary, err error) {
	if o.clients > 0 {
		s.readers, s.writers = o.clients/2, o.clients-o.clients/2
	}
	dir, err := os.MkdirTemp(o.dir, "lincheck-"+s.name+"-")
	if err != nil {
		return sum, err
	}
	logPath := filepath.Join(dir, "kvserver.log")
	logf, err := os.Create(logPath)
	if err != nil {
		os.RemoveAll(dir)
		return sum, err
	}
	defer func() {
		logf.Close()
		if err == nil && sum.passed() && !o.keep {
			os.RemoveAll(dir)
			return
		}
		fmt.Fprintf(out, "kept: data %s, kvserver log %s\n", filepath.Join(dir, "data"), logPath)
	}()
	fmt.Fprintf(out, "%s: %s (seed %d)\n", s.name, s.describe(), o.seed)

	start := func() (*harness.Server, error) {
		return harness.Start(ctx, harness.Options{Binary: o.kvserver, DataDir: filepath.Join(dir, "data"), Args: s.args, Log: logf})
	}
	srv, err := start()
	if err != nil {
		return sum, err
	}
	defer func() { srv.Cleanup() }() // kills it if still running
	r, err := lincheck.NewRunner(lincheck.Workload{
		Keys: s.keys, Readers: s.readers, Writers: s.writers, ValueSize: s.valueSize,
		DeleteOneIn: s.deleteOneIn, Timeout: requestTimeout, Seed: o.seed,
	})
	if err != nil {
		return sum, err
	}

	began := time.Now()
	killed := false
	for i := 0; ; i++ {
		done := i >= o.epochs && o.epochs > 0 || o.epochs == 0 && time.Since(began) >= o.duration
		if done || ctx.Err() != nil {
			break
		}
		var midway func()
		if s.restart && !killed && (o.epochs > 0 && i == o.epochs/2 || o.epochs == 0 && time.Since(began) >= o.duration/2) {
			midway = func() {
				srv.Kill()
				killed = true
			}
		}
		r.Epoch(ctx, srv.URL, o.epochOps, midway)
		restarted := midway != nil
		if restarted {
			if srv, err = start(); err != nil {
				return sum, fmt.Errorf("restart after kill -9: %w", err)
			}
			fmt.Fprintf(out, "  epoch %d: kill -9 midway, restarted on the same data\n", i)
		}
		if err := r.Close(ctx, srv.URL, restarted); err != nil {
			return sum, err
		}
		sum.epochs++
	}
	sum.ran, sum.stats = time.Since(began), r.Stats()
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	if err := srv.Stop(30 * time.Second); err != nil {
		return sum, err
	}

	prefix := filepath.Join(o.out, fmt.Sprintf("kvpool-lincheck-%s-%s", time.Now().UTC().Format("20060102T150405Z"), s.name))
	sum.result, err = lincheck.Check(r.Histories(), lincheck.CheckOptions{Timeout: o.checkTimeout, HTMLPrefix: prefix})
	st := sum.stats
	fmt.Fprintf(out, "  %s in %v: %d reads, %d writes answered; %d writes in doubt, %d reads dropped (%d of them got no answer, the others another status, such as 503); %d corrupt values read\n",
		count(sum.epochs, "epoch"), sum.ran.Round(100*time.Millisecond), st.Reads, st.Writes, st.InDoubt, st.DroppedReads, st.Unanswered, st.Corrupt)
	res := sum.result
	fmt.Fprintf(out, "  checked %d operations (porcupine searched %d), %s, %s in %v: %s",
		res.Ops, res.Searched, count(res.Keys, "key"), count(res.Histories, "history"), res.Took.Round(10*time.Millisecond), res.Verdict)
	switch res.Verdict {
	case lincheck.Illegal:
		fmt.Fprintf(out, " (%s illegal; porcupine's view: %s)\n", count(res.Illegal, "history"), strings.Join(res.Views, ", "))
	case lincheck.Unknown:
		fmt.Fprintf(out, " (%s undecided within %v: not a pass)\n", count(res.Unknown, "history"), o.checkTimeout)
	default:
		fmt.Fprintln(out)
	}
	return sum, err
}

// count is n and noun, in the plural unless n is 1.
func count(n int, noun string) string {
	switch {
	case n == 1:
	case noun == "history":
		noun = "histories"
	default:
		noun += "s"
	}
	return fmt.Sprintf("%d %s", n, noun)
}
