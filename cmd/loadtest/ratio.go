package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

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
	a, b, err := ratio.ReadPairs(stdin)
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
