package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kvpool/kvpool/internal/loadgen/merge"
	"github.com/kvpool/kvpool/internal/loadgen/report"
)

func mergeFlags(out *string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("loadtest merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(out, "out", "", "new or empty directory for the merged run (required)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: loadtest merge DIR DIR... -out DIR\n\n"+
			"Combines runs of one load made at the same time from several loader machines:\n"+
			"histograms and interval logs merged exactly, rates and counts summed,\n"+
			"results.bin concatenated, and the wrk2-style table of the whole. The shards of\n"+
			"one schedule (attack -shard K/N -start-at TIME) must agree on N, -rate and\n"+
			"-start-at, each K once; shards missing from 1..N are named.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}

func runMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out string
	fs := mergeFlags(&out, stderr)
	// Flags may come after the folders (loadtest merge a b -out c).
	var dirs []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		args = fs.Args()
		for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			dirs = append(dirs, args[0])
			args = args[1:]
		}
		if len(args) == 0 {
			break
		}
	}
	switch {
	case out == "":
		return usageError(fmt.Errorf("-out is required: the folder for the merged run"))
	case len(dirs) < 2:
		return usageError(fmt.Errorf("give at least two run folders to merge, got %d", len(dirs)))
	}
	if err := report.PrepareDir(out); err != nil {
		return err
	}
	m, err := merge.Runs(dirs, out)
	if err != nil {
		_ = os.Remove(out) // only if nothing was written
		return err
	}
	m.Print(stdout)
	fmt.Fprintf(stderr, "merged %d runs into %s/\n", len(dirs), out)
	return nil
}
