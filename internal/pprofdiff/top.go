// Package pprofdiff prints what `go tool pprof -top -diff_base` prints,
// in-process, so that a report needs no Go toolchain on the machine that
// takes it: Top runs pprof's own driver (github.com/google/pprof/driver)
// on two profile files. ParseTop reads the rows of such a table.
package pprofdiff

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/driver"
)

// Nodes is how many rows a table of Top shows (pprof's -nodecount).
const Nodes = 12

// driverMu serialises Top's runs of pprof's driver, which is written for
// one run per process: it keeps its settings (-nodecount, -normalize,
// -output, ...) in a variable of the package, parses the flags into it and
// reads it back after fetching the profiles, and at the end of a run
// removes every temporary file any run made. (Top's runs differ only in
// -normalize, which the driver takes before fetching, so two at once
// would print right today; that rests on the driver's internals.)
var driverMu sync.Mutex

// Top returns the table `go tool pprof -top -nodecount=12 -diff_base=base
// prof` prints (with normalize, `-normalize`: prof is first scaled to
// base's total, so that profiles taken at different rates compare by where
// the time goes rather than by how much there was), less its File, Build
// ID and Time lines and its final newline.
//
// It reads only the two files: no symbolization, no binaries looked up,
// no network; and it prints nothing: what pprof would say goes into the
// error, if there is one. Top may be called from several goroutines: it
// runs one table at a time.
func Top(ctx context.Context, base, prof string, normalize bool) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	const output = "top" // the name the Writer is asked for; no file is made
	args := []string{
		"-top",
		"-nodecount=" + strconv.Itoa(Nodes),
		"-diff_base=" + base,
		// Always given, true or false: the driver's setting outlives a run.
		"-normalize=" + strconv.FormatBool(normalize),
		"-symbolize=none",
		"-output=" + output,
		prof,
	}
	flags := newFlagSet(args)
	ui := &quietUI{}
	w := &bufferWriter{}
	driverMu.Lock()
	err := driver.PProf(&driver.Options{
		Flagset:       flags,
		UI:            ui,
		Writer:        w,
		Fetch:         fileFetcher{},
		Obj:           noObjTool{},
		HTTPTransport: noNetwork{},
	})
	driverMu.Unlock()
	if err == nil {
		err = flags.err
	}
	if err != nil {
		if said := ui.said(); said != "" {
			return "", fmt.Errorf("cannot diff %s against %s: %w (pprof: %s)", prof, base, err, said)
		}
		return "", fmt.Errorf("cannot diff %s against %s: %w", prof, base, err)
	}
	if w.name != output {
		return "", fmt.Errorf("cannot diff %s against %s: pprof wrote no table", prof, base)
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(w.buf.String(), "\n"), "\n") {
		// The profile's own file name and when it was taken: the same
		// diff of copies of the profiles elsewhere reads the same.
		if !strings.HasPrefix(line, "File: ") && !strings.HasPrefix(line, "Build ID: ") && !strings.HasPrefix(line, "Time: ") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n"), nil
}
