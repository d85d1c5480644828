package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stopWait bounds a clean stop in these tests; kvserver's own
// -shutdown-timeout is the longest one may take.
const stopWait = 15 * time.Second

// start starts kvserverBin with o (Binary filled in) and cleans up after
// the test whatever happens.
func start(t *testing.T, o Options) *Server {
	t.Helper()
	o.Binary = kvserverBin
	s, err := Start(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { s.Cleanup() })
	return s
}

func put(t *testing.T, s *Server, key, value string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, s.URL+"/v0/entity?id="+key, strings.NewReader(value))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, "PUT %s", key)
}

// get returns the status and body of GET key.
func get(t *testing.T, s *Server, key string) (int, string) {
	t.Helper()
	resp, err := http.Get(s.URL + "/v0/entity?id=" + key)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// TestStartServeStop: a started server answers on the address it logged,
// reports its settings and resource use, serves profiles that pprof
// reads, and stops cleanly with exit code 0, taking its fresh data
// directory with it.
func TestStartServeStop(t *testing.T) {
	parent := t.TempDir()
	s := start(t, Options{TempDir: parent, Args: []string{"-pool", "fifo", "-cache-mb", "16"}})
	assert.Regexp(t, `^127\.0\.0\.1:\d+$`, s.Addr)
	assert.Equal(t, "http://"+s.Addr, s.URL)
	assert.Positive(t, s.PID)
	assert.Equal(t, parent, filepath.Dir(s.DataDir), "a fresh data directory under TempDir")
	assert.True(t, s.Running())
	assert.Equal(t, -1, s.ExitCode(), "no exit code while it runs")

	put(t, s, "k1", "v1")
	code, body := get(t, s, "k1")
	assert.Equal(t, 200, code)
	assert.Equal(t, "v1", body)

	info, err := s.ConfigInfo(context.Background())
	assert.NoError(t, err, s.LogTail(20))
	assert.Equal(t, "fifo", info["pool"])
	assert.Equal(t, "16", info["cache_mb"])
	for _, label := range []string{"workers", "cap", "overflow", "queue_timeout", "sync", "version", "io_delay", "io_delay_dist"} {
		assert.Contains(t, info, label)
	}

	first, err := s.Sample()
	require.NoError(t, err)
	assert.Positive(t, first.RSSBytes)
	assert.GreaterOrEqual(t, first.CPU, time.Duration(0))
	assert.False(t, first.At.IsZero())

	dir := t.TempDir()
	cpu := filepath.Join(dir, "cpu.pb.gz")
	require.NoError(t, s.Profile(context.Background(), "cpu", 1, cpu))
	assertProfile(t, cpu, "cpu")
	heap := filepath.Join(dir, "heap.pb.gz")
	require.NoError(t, s.Profile(context.Background(), "heap", 0, heap))
	assertProfile(t, heap, "alloc_space")
	err = s.Profile(context.Background(), "no-such-profile", 0, filepath.Join(dir, "x.pb.gz"))
	assert.ErrorContains(t, err, "no-such-profile")
	assert.NoFileExists(t, filepath.Join(dir, "x.pb.gz"))
	assert.ErrorContains(t, s.Profile(context.Background(), "cpu", 0, cpu), "seconds > 0")

	second, err := s.Sample()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, second.CPU, first.CPU, "CPU time never goes back")
	assert.True(t, second.At.After(first.At))

	// Unloaded, with a near-empty store, it idles (at once, on a quiet
	// machine).
	waited, err := s.WaitIdle(context.Background(), IdleWindows, time.Minute)
	require.NoError(t, err, s.LogTail(20))
	assert.GreaterOrEqual(t, waited, IdleWindows*IdleWindow)

	require.NoError(t, s.Stop(stopWait))
	assert.Equal(t, 0, s.ExitCode())
	assert.False(t, s.Running())
	assert.NoDirExists(t, s.DataDir, "Stop removes the data directory it made")
	assert.Contains(t, s.LogTail(5), "stopped cleanly")
	_, err = s.Sample()
	assert.Error(t, err, "no sample of an ended process")
	_, err = s.WaitIdle(context.Background(), IdleWindows, time.Minute)
	assert.Error(t, err, "an ended process is not waited for")
}

// assertProfile: the file is a profile that pprof's parser reads, with a
// sample type named want.
func assertProfile(t *testing.T, path, want string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	p, err := profile.Parse(f)
	require.NoError(t, err, "%s is not a valid profile", path)
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type)
	}
	assert.Contains(t, types, want, path)
}

// TestBadFlagFailsFast: a flag kvserver refuses makes Start fail at once
// with kvserver's own exit code for bad configuration (2) and its message,
// leaving no process and no data directory behind.
func TestBadFlagFailsFast(t *testing.T) {
	f := func(args ...string) {
		t.Helper()
		parent := t.TempDir()
		s, err := Start(context.Background(), Options{Binary: kvserverBin, TempDir: parent, Args: args})
		require.Error(t, err, "%q", args)
		assert.Nil(t, s)
		var se *StartError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, 2, se.ExitCode, "%q: %v", args, err)
		assert.Contains(t, se.LogTail, args[len(args)-1], "the message names what was wrong")
		entries, err := os.ReadDir(parent)
		require.NoError(t, err)
		assert.Empty(t, entries, "the fresh data directory is removed")
	}
	f("-pool", "no-such-pool")
	f("-no-such-flag")
	f("-read-timeout", "soon")
}

// TestStartFailures: a binary that is not there, one that exits before it
// serves, and one that never says where it serves are all reported, with
// the exit code and output where there are some.
func TestStartFailures(t *testing.T) {
	_, err := Start(context.Background(), Options{Binary: filepath.Join(t.TempDir(), "missing")})
	var se *StartError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, -1, se.ExitCode)
	assert.Contains(t, err.Error(), "make build")

	exits := script(t, `echo "level=INFO msg=serving addr=127.0.0.1:1"; echo "going away" >&2; exit 3`)
	_, err = Start(context.Background(), Options{Binary: exits})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 3, se.ExitCode, "%v", err)
	assert.Contains(t, se.LogTail, "going away")

	silent := script(t, `echo "starting"; exec sleep 60`)
	_, err = Start(context.Background(), Options{Binary: silent, StartTimeout: 200 * time.Millisecond})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, -1, se.ExitCode, "it was killed, it did not exit: %v", err)
	assert.Contains(t, se.Reason, "msg=serving")
	assert.Contains(t, se.LogTail, "starting")
}

// script writes an executable shell script with body and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fake-kvserver")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return path
}

// TestKill: Kill ends the process at once; the exit code says a signal did.
func TestKill(t *testing.T) {
	s := start(t, Options{TempDir: t.TempDir(), Args: []string{"-cache-mb", "16"}})
	require.NoError(t, s.Kill())
	select {
	case <-s.Exited():
	default:
		t.Fatal("Exited not closed after Kill returned")
	}
	assert.Equal(t, -1, s.ExitCode())
	assert.NoDirExists(t, s.DataDir)
	assert.NoError(t, s.Kill(), "killing an ended server is no error")
	assert.NoError(t, s.Cleanup())
}

// TestSeedCopyIsIndependent: a server started from a seed store sees the
// seed's data, and what it writes stays in its copy: the seed is unchanged
// and shares no file with the copy.
func TestSeedCopyIsIndependent(t *testing.T) {
	seed := filepath.Join(t.TempDir(), "seed")
	s := start(t, Options{DataDir: seed, Args: []string{"-cache-mb", "16"}})
	put(t, s, "k1", "seed value")
	require.NoError(t, s.Stop(stopWait))
	assert.DirExists(t, seed, "a data directory the caller gave is kept")

	cp := filepath.Join(t.TempDir(), "copy")
	c := start(t, Options{DataDir: cp, SeedDir: seed, Args: []string{"-cache-mb", "16"}})
	code, body := get(t, c, "k1")
	assert.Equal(t, 200, code)
	assert.Equal(t, "seed value", body)
	put(t, c, "k1", "changed in the copy")
	put(t, c, "k2", "only in the copy")
	require.NoError(t, c.Stop(stopWait))
	assertNoSharedFiles(t, seed, cp)

	again := start(t, Options{DataDir: seed, Args: []string{"-cache-mb", "16"}})
	code, body = get(t, again, "k1")
	assert.Equal(t, 200, code)
	assert.Equal(t, "seed value", body, "the copy's write did not reach the seed")
	code, _ = get(t, again, "k2")
	assert.Equal(t, 404, code)
	require.NoError(t, again.Stop(stopWait))
}

// assertNoSharedFiles: no file under a is the same file (hard link) as the
// file at the same path under b.
func assertNoSharedFiles(t *testing.T, a, b string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(a, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, path)
		ai, err := os.Stat(path)
		if err != nil {
			return err
		}
		bi, err := os.Stat(filepath.Join(b, rel))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		n++
		assert.False(t, os.SameFile(ai, bi), "%s is shared between %s and %s", rel, a, b)
		return nil
	})
	require.NoError(t, err)
	assert.Positive(t, n, "the two directories have files in common by name")
}

// TestCopyDir: the copy has the same tree and contents; changing it does
// not change the source; it works into a missing or an empty directory.
func TestCopyDir(t *testing.T) {
	src := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(src, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "top"), []byte("top"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "a", "b", "deep"), []byte("deep"), 0o644))

	for _, dst := range []string{filepath.Join(t.TempDir(), "missing"), t.TempDir()} {
		require.NoError(t, CopyDir(src, dst))
		got, err := os.ReadFile(filepath.Join(dst, "a", "b", "deep"))
		require.NoError(t, err)
		assert.Equal(t, "deep", string(got))
		require.NoError(t, os.WriteFile(filepath.Join(dst, "top"), []byte("changed"), 0o644))
		got, err = os.ReadFile(filepath.Join(src, "top"))
		require.NoError(t, err)
		assert.Equal(t, "top", string(got), "writing the copy changed the source")
		assertNoSharedFiles(t, src, dst)
	}
	assert.ErrorContains(t, CopyDir(filepath.Join(src, "nonesuch"), t.TempDir()), "nonesuch")
	assert.ErrorContains(t, CopyDir(filepath.Join(src, "top"), t.TempDir()), "not a directory")
}

// TestEnvLogAndCPUs: Env reaches the server (kvserver reads KVPOOL_*),
// Log receives its output after the command line, and CPUs binds it to
// one CPU from its first instruction (its GOMAXPROCS, hence its default
// workers, is 1) with no wrapper on its command line.
func TestEnvLogAndCPUs(t *testing.T) {
	var log bytes.Buffer
	o := Options{TempDir: t.TempDir(), Args: []string{"-cache-mb", "16"}, Env: []string{"KVPOOL_POOL=lifo"}, Log: &log}
	if runtime.GOOS == "linux" {
		may, err := cpuset.Affinity()
		require.NoError(t, err)
		o.CPUs = cpuset.Of(may.CPUs()[may.Len()-1]) // the highest: not CPU 0 where there are two
	}
	s := start(t, o)
	assert.Equal(t, kvserverBin, s.Args[0], "the command line starts with the binary")
	assert.Equal(t, o.CPUs, s.CPUs)
	if !o.CPUs.IsEmpty() {
		status, err := os.ReadFile("/proc/" + strconv.Itoa(s.PID) + "/status")
		require.NoError(t, err)
		assert.Contains(t, string(status), "Cpus_allowed_list:\t"+o.CPUs.String()+"\n")
		info, err := s.ConfigInfo(context.Background())
		require.NoError(t, err, s.LogTail(20))
		assert.Equal(t, "1", info["workers"], "GOMAXPROCS of a server on one CPU")
	}
	require.NoError(t, s.Stop(stopWait))
	out := log.String()
	assert.True(t, strings.HasPrefix(out, "--- "), "the command line comes first: %q", out)
	if !o.CPUs.IsEmpty() {
		first, _, _ := strings.Cut(out, "\n")
		assert.True(t, strings.HasSuffix(first, " on CPUs "+o.CPUs.String()), "the first line names the CPUs: %q", first)
	}
	assert.Contains(t, out, "msg=serving")
	assert.Contains(t, out, "pool=lifo", "KVPOOL_POOL from Env")
	assert.Contains(t, out, "stopped cleanly")
}

// TestStartRefusesMissingCPUs: CPUs the machine lacks are refused before
// anything runs, naming them.
func TestStartRefusesMissingCPUs(t *testing.T) {
	online, err := cpuset.Online()
	require.NoError(t, err)
	cpus := online.CPUs()
	missing := cpus[len(cpus)-1] + 1
	if missing > cpuset.MaxCPU {
		t.Skip("every CPU a set can name is online")
	}
	parent := t.TempDir()
	_, err = Start(context.Background(), Options{Binary: kvserverBin, TempDir: parent, CPUs: cpuset.Of(missing)})
	assert.EqualError(t, err, fmt.Sprintf("harness: Options.CPUs %d: CPU %d is not on this machine (it has %s)", missing, missing, online))
	left, err := os.ReadDir(parent)
	require.NoError(t, err)
	assert.Empty(t, left, "a data directory left behind")
}

// TestStopFailures: a server that ignores SIGTERM is killed after the
// timeout, and one that exits non-zero on it: both are errors that say so.
func TestStopFailures(t *testing.T) {
	status := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer status.Close()
	serving := `echo "level=INFO msg=serving addr=` + strings.TrimPrefix(status.URL, "http://") + `"`

	// An ignored signal stays ignored across exec.
	deaf := script(t, "trap '' TERM\n"+serving+"\nexec sleep 60")
	s, err := Start(context.Background(), Options{Binary: deaf})
	require.NoError(t, err)
	defer s.Cleanup()
	err = s.Stop(100 * time.Millisecond)
	assert.ErrorContains(t, err, "still running 100ms after SIGTERM; killed it")
	assert.False(t, s.Running())
	assert.Equal(t, -1, s.ExitCode())

	unclean := script(t, "trap 'kill $!; echo unclean; exit 1' TERM\n"+serving+"\nsleep 60 >/dev/null 2>&1 &\nwait")
	s, err = Start(context.Background(), Options{Binary: unclean})
	require.NoError(t, err)
	defer s.Cleanup()
	err = s.Stop(stopWait)
	assert.ErrorContains(t, err, "exited with code 1 after SIGTERM, want 0")
	assert.ErrorContains(t, err, "unclean", "the error carries the log tail")
	assert.Equal(t, 1, s.ExitCode())
}

// TestConcurrentUse: reading a server's state from several goroutines while
// it is stopped is safe (run with -race).
func TestConcurrentUse(t *testing.T) {
	s := start(t, Options{TempDir: t.TempDir(), Args: []string{"-cache-mb", "16"}})
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for s.Running() {
				s.LogTail(5)
				s.ExitCode()
				s.Sample() // fails once the process is gone, which is fine here
			}
		}()
	}
	require.NoError(t, s.Stop(stopWait))
	for range 4 {
		<-done
	}
	assert.Equal(t, 0, s.ExitCode())
}
