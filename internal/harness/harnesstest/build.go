// Package harnesstest builds the real kvserver for tests that start it
// through the harness. Each test binary builds it once, from its TestMain
// (RunWithKVServer).
package harnesstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RaceEnabled reports whether this test binary was built with -race.
const RaceEnabled = raceEnabled

// RunWithKVServer is a TestMain's body: it builds kvserver (BuildKVServer)
// into a temporary directory, sets *bin to it, runs the tests and removes
// the directory. It returns the exit code for os.Exit; 1 when the build
// fails, which it reports on stderr.
func RunWithKVServer(m *testing.M, bin *string, race bool) int {
	dir, err := os.MkdirTemp("", "kvserver-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot make a directory for the kvserver binary:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *bin, err = BuildKVServer(dir, race); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// BuildKVServer builds cmd/kvserver into dir and returns the binary's path.
// With race it is built with -race, which reuses the packages a -race test
// run already compiled, and GORACE (unless set) drops the race runtime's
// pause at every exit: a race still makes kvserver exit 66, which the
// harness reports. The go command's output goes to stderr.
func BuildKVServer(dir string, race bool) (string, error) {
	bin := filepath.Join(dir, "kvserver")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
		if os.Getenv("GORACE") == "" {
			os.Setenv("GORACE", "atexit_sleep_ms=0")
		}
	}
	build := exec.Command("go", append(args, "github.com/kvpool/kvpool/cmd/kvserver")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("cannot build kvserver into %s: %w; does `go build ./cmd/kvserver` work?", dir, err)
	}
	return bin, nil
}
