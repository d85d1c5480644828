package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kvpool/kvpool/internal/ratio"
)

// runRatio reads pairs "A B" (one per line: two measurements taken one
// right after the other) from standard input and prints the median of
// B/A over the pairs with its 95 % interval, as internal/ratio takes it:
// what the bench scripts use to say whether one loader costs more than
// another beyond the noise.
func runRatio(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadtest ratio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: loadtest ratio < PAIRS\n\nReads lines \"A B\" and prints the median of B/A and its 95 % interval (unbounded below 6 pairs).")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("unexpected arguments %q: the pairs come on standard input", fs.Args()))
	}
	a, b, err := readPairs(stdin)
	if err != nil {
		return usageError(err)
	}
	iv, err := ratio.Paired(a, b)
	if err != nil {
		return usageError(err)
	}
	fmt.Fprintln(stdout, iv.Text())
	return nil
}

// stdin is where ratio reads its pairs; tests replace it.
var stdin io.Reader = os.Stdin

// readPairs reads lines of two positive numbers; blank lines are skipped.
func readPairs(r io.Reader) (a, b []float64, err error) {
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, nil, fmt.Errorf("line %d: %q is not a pair \"A B\"", line, sc.Text())
		}
		x, errA := strconv.ParseFloat(f[0], 64)
		y, errB := strconv.ParseFloat(f[1], 64)
		if errA != nil || errB != nil {
			return nil, nil, fmt.Errorf("line %d: %q: both values must be numbers", line, sc.Text())
		}
		a, b = append(a, x), append(b, y)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if len(a) == 0 {
		return nil, nil, fmt.Errorf("no pairs on standard input")
	}
	return a, b, nil
}
