package pprofdiff

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"
)

// This file holds what Top hands pprof's driver in place of a command
// line, a terminal, the file system and the network.

// flagSet is driver.FlagSet over a fixed argument list: the flags the
// driver defines take their values from args, the rest keep the
// defaults the driver gives them. An argument the driver defines no flag
// for is an error (err), not a flag silently dropped.
type flagSet struct {
	fs   *flag.FlagSet
	args []string
	err  error
}

var _ driver.FlagSet = (*flagSet)(nil)

func newFlagSet(args []string) *flagSet {
	fs := flag.NewFlagSet("pprof", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flagSet{fs: fs, args: args}
}

func (f *flagSet) Bool(name string, def bool, usage string) *bool {
	return f.fs.Bool(name, def, usage)
}

func (f *flagSet) Int(name string, def int, usage string) *int {
	return f.fs.Int(name, def, usage)
}

func (f *flagSet) Float64(name string, def float64, usage string) *float64 {
	return f.fs.Float64(name, def, usage)
}

func (f *flagSet) String(name, def, usage string) *string {
	return f.fs.String(name, def, usage)
}

// StringList takes one value, as pprof's own command line does.
func (f *flagSet) StringList(name, def, usage string) *[]*string {
	return &[]*string{f.fs.String(name, def, usage)}
}

func (f *flagSet) ExtraUsage() string   { return "" }
func (f *flagSet) AddExtraUsage(string) {}

// Parse returns nil where args do not parse: the driver then fails for
// want of a profile, and Top returns err.
func (f *flagSet) Parse(usage func()) []string {
	if err := f.fs.Parse(f.args); err != nil {
		f.err = fmt.Errorf("pprof's flags %q: %w", f.args, err)
		return nil
	}
	return f.fs.Args()
}

// quietUI is driver.UI without a terminal: it reads no commands and keeps
// what the driver prints, for Top's error. The driver prints from more
// than one goroutine (it fetches the profile and its base at once).
type quietUI struct {
	mu    sync.Mutex
	lines []string
}

var _ driver.UI = (*quietUI)(nil)

func (*quietUI) ReadLine(string) (string, error) { return "", io.EOF }

func (u *quietUI) Print(args ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lines = append(u.lines, strings.TrimSpace(fmt.Sprint(args...)))
}

func (u *quietUI) PrintErr(args ...any) { u.Print(args...) }

func (*quietUI) IsTerminal() bool                    { return false }
func (*quietUI) WantBrowser() bool                   { return false }
func (*quietUI) SetAutoComplete(func(string) string) {}

// said is what the driver printed, one message after another.
func (u *quietUI) said() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return strings.Join(u.lines, "; ")
}

// bufferWriter is driver.Writer into memory: the report pprof would write
// to the file named by -output.
type bufferWriter struct {
	name string
	buf  bytes.Buffer
}

func (w *bufferWriter) Open(name string) (io.WriteCloser, error) {
	w.name = name
	w.buf.Reset()
	return nopCloser{&w.buf}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// fileFetcher is driver.Fetcher of local files only: pprof's own fetcher
// takes a path that does not exist for a URL to fetch.
type fileFetcher struct{}

func (fileFetcher) Fetch(src string, _, _ time.Duration) (*profile.Profile, string, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, "", fmt.Errorf("cannot read profile %s: %w", src, err)
	}
	// No source URL: the profile is local, so the driver neither
	// symbolizes it remotely nor saves a copy under $HOME/pprof.
	return p, "", nil
}

// noObjTool is driver.ObjTool without binaries: the driver would
// otherwise look for the profiled executables (under $HOME/pprof/binaries)
// and run binutils on them; Go profiles carry their function names.
type noObjTool struct{}

var errNoBinaries = errors.New("pprofdiff opens no binaries")

func (noObjTool) Open(string, uint64, uint64, uint64, string) (driver.ObjFile, error) {
	return nil, errNoBinaries
}

func (noObjTool) Disasm(string, uint64, uint64, bool) ([]driver.Inst, error) {
	return nil, errNoBinaries
}

// noNetwork is the driver's HTTP transport: Top fetches nothing.
type noNetwork struct{}

func (noNetwork) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("pprofdiff makes no requests (%s)", r.URL)
}
