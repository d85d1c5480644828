package pprofdiff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/pprof holds small CPU and mutex profiles of a "direct" and a
// "pool" run of one workload, written by TestRegenerateProfiles.
const pprofTestdata = "testdata/pprof"

// TestPprofTopMatchesGoToolPprof diffs the committed profiles both ways,
// with and without -normalize, and wants what `go tool pprof -top` prints
// of them, line for line.
func TestPprofTopMatchesGoToolPprof(t *testing.T) {
	for _, kind := range []string{"cpu", "mutex"} {
		for _, pair := range [][2]string{{"direct", "pool"}, {"pool", "direct"}} {
			base := filepath.Join(pprofTestdata, kind+"_"+pair[0]+".pb.gz")
			prof := filepath.Join(pprofTestdata, kind+"_"+pair[1]+".pb.gz")
			for _, normalize := range []bool{false, true} {
				top := assertTopMatchesGoToolPprof(t, base, prof, normalize)
				assert.NotEmpty(t, ParseTop(top), "%s against %s: no rows", prof, base)
			}
		}
	}
}

// assertTopMatchesGoToolPprof compares Top's table with `go tool
// pprof`'s where `go` is on PATH, and returns Top's.
func assertTopMatchesGoToolPprof(t *testing.T, base, prof string, normalize bool) string {
	t.Helper()
	top, err := Top(t.Context(), base, prof, normalize)
	require.NoError(t, err)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no `go` on PATH to compare with `go tool pprof`: %v", err)
	}
	args := []string{"tool", "pprof", "-top", "-nodecount=12", "-diff_base=" + base}
	if normalize {
		args = append(args, "-normalize")
	}
	out, err := exec.CommandContext(t.Context(), "go", append(args, prof)...).Output()
	require.NoError(t, err, "go %s", strings.Join(args, " "))
	var want []string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if !strings.HasPrefix(line, "File:") && !strings.HasPrefix(line, "Build ID:") && !strings.HasPrefix(line, "Time:") {
			want = append(want, line)
		}
	}
	assert.Equal(t, strings.Join(want, "\n"), top, "%s against %s, normalize %v", prof, base, normalize)
	return top
}

// TestPprofTopNeedsNoGoToolchain is the machine with kvserver and
// loadtest but no Go: the diff must still come out.
func TestPprofTopNeedsNoGoToolchain(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	top, err := Top(t.Context(), filepath.Join(pprofTestdata, "cpu_direct.pb.gz"), filepath.Join(pprofTestdata, "cpu_pool.pb.gz"), false)
	require.NoError(t, err)
	assert.Contains(t, top, "Showing top 12 nodes out of ")
	assert.Len(t, ParseTop(top), Nodes)
	_, ok := LargestIncrease(ParseTop(top))
	assert.True(t, ok, "the pool's run has rows that grow:\n%s", top)
}

func TestPprofTopErrors(t *testing.T) {
	cpu := filepath.Join(pprofTestdata, "cpu_direct.pb.gz")
	_, err := Top(t.Context(), cpu, filepath.Join(t.TempDir(), "missing.pb.gz"), false)
	assert.ErrorContains(t, err, "missing.pb.gz")
	_, err = Top(t.Context(), filepath.Join(t.TempDir(), "missing.pb.gz"), cpu, false)
	assert.ErrorContains(t, err, "missing.pb.gz", "a missing base")
	corrupt := filepath.Join(t.TempDir(), "corrupt.pb.gz")
	require.NoError(t, os.WriteFile(corrupt, []byte("not a profile"), 0o644))
	_, err = Top(t.Context(), cpu, corrupt, false)
	assert.ErrorContains(t, err, "cannot read profile "+corrupt)
	_, err = Top(t.Context(), cpu, filepath.Join(pprofTestdata, "mutex_pool.pb.gz"), false)
	assert.ErrorContains(t, err, "cannot diff", "a mutex profile against a CPU one")
}

// TestPprofTopPrintsNothing: pprof's driver talks to a terminal; Top's
// caller prints the table, or the error, itself.
func TestPprofTopPrintsNothing(t *testing.T) {
	stdout, stderr := os.Stdout, os.Stderr
	t.Cleanup(func() { os.Stdout, os.Stderr = stdout, stderr })
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	require.NoError(t, err)
	os.Stdout, os.Stderr = out, out
	cpu := filepath.Join(pprofTestdata, "cpu_direct.pb.gz")
	_, err = Top(t.Context(), cpu, filepath.Join(pprofTestdata, "cpu_pool.pb.gz"), true)
	assert.NoError(t, err)
	_, err = Top(t.Context(), cpu, filepath.Join(t.TempDir(), "missing.pb.gz"), false)
	assert.Error(t, err)
	os.Stdout, os.Stderr = stdout, stderr
	printed, err := os.ReadFile(out.Name())
	require.NoError(t, err)
	assert.Empty(t, string(printed))
}

// TestPprofTopRunsAreIndependent: the driver keeps its settings between
// runs, so a -normalize run must not normalize the next; and runs from
// several goroutines each print their own table.
func TestPprofTopRunsAreIndependent(t *testing.T) {
	base, prof := filepath.Join(pprofTestdata, "cpu_direct.pb.gz"), filepath.Join(pprofTestdata, "cpu_pool.pb.gz")
	want := map[bool]string{}
	for _, normalize := range []bool{false, true, false} {
		top, err := Top(t.Context(), base, prof, normalize)
		require.NoError(t, err)
		if w, ok := want[normalize]; ok {
			require.Equal(t, w, top, "normalize %v after a run with the other", normalize)
		}
		want[normalize] = top
	}
	require.NotEqual(t, want[false], want[true])

	var wg sync.WaitGroup
	for i := range 8 {
		normalize := i%2 == 0
		wg.Go(func() {
			top, err := Top(t.Context(), base, prof, normalize)
			assert.NoError(t, err)
			assert.Equal(t, want[normalize], top, "normalize %v, alongside others", normalize)
		})
	}
	wg.Wait()
}

// stackSample is one stack of a synthetic CPU profile, root first; a frame
// "outer+inner" is one location where inner was inlined into outer.
type stackSample struct {
	stack string
	ns    int64
}

// cpuProfile builds a CPU profile of samples taken over a second.
func cpuProfile(samples ...stackSample) *profile.Profile {
	m := &profile.Mapping{ID: 1, File: "/bin/kvserver", HasFunctions: true}
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        int64(10 * time.Millisecond),
		DurationNanos: int64(time.Second),
		Mapping:       []*profile.Mapping{m},
	}
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	for _, s := range samples {
		var stack []*profile.Location
		for _, frame := range strings.Fields(s.stack) {
			l := locs[frame]
			if l == nil {
				l = &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m}
				names := strings.Split(frame, "+")
				for i := len(names) - 1; i >= 0; i-- {
					f := funcs[names[i]]
					if f == nil {
						f = &profile.Function{ID: uint64(len(p.Function) + 1), Name: names[i]}
						funcs[names[i]] = f
						p.Function = append(p.Function, f)
					}
					l.Line = append(l.Line, profile.Line{Function: f})
				}
				locs[frame] = l
				p.Location = append(p.Location, l)
			}
			stack = append([]*profile.Location{l}, stack...)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: stack, Value: []int64{s.ns / p.Period, s.ns}})
	}
	return p
}

func millis(n int64) int64 { return n * int64(time.Millisecond) }

// topOf is Top of two profiles written to files.
func topOf(t *testing.T, base, prof *profile.Profile, normalize bool) string {
	t.Helper()
	dir := t.TempDir()
	b, p := filepath.Join(dir, "base.pb.gz"), filepath.Join(dir, "prof.pb.gz")
	writeProfile(t, b, base)
	writeProfile(t, p, prof)
	top, err := Top(t.Context(), b, p, normalize)
	require.NoError(t, err)
	return top
}

func TestPprofTopSubtractsTheBase(t *testing.T) {
	base := cpuProfile(stackSample{"main a", millis(300)}, stackSample{"main b", millis(100)})
	prof := cpuProfile(stackSample{"main a", millis(600)}, stackSample{"main c", millis(200)})
	top := topOf(t, base, prof, false)
	// Shares are of the base's total; the durations add up.
	assert.Equal(t, `Type: cpu
Duration: 2s, Total samples = 400ms (20.00%)
Showing nodes accounting for 400ms, 100% of 400ms total
      flat  flat%   sum%        cum   cum%
     300ms 75.00% 75.00%      300ms 75.00%  a
     200ms 50.00% 125.00%      200ms 50.00%  c
    -100ms 25.00%   100%     -100ms 25.00%  b
         0     0%   100%      400ms   100%  main`, top)
}

func TestPprofTopNormalizes(t *testing.T) {
	base := cpuProfile(stackSample{"main a", millis(300)}, stackSample{"main b", millis(100)})
	prof := cpuProfile(stackSample{"main a", millis(600)}, stackSample{"main c", millis(200)})
	top := topOf(t, base, prof, true)
	// Scaled to the base's 400ms, the profile spends 300ms in a, as the
	// base does: a and main are gone, what is left is where the shares
	// moved.
	assert.Contains(t, top, "\nShowing nodes accounting for 0, 0% of 400ms total\n")
	assert.Equal(t, []TopRow{
		{Flat: "-100ms", FlatPct: -25, Function: "b"},
		{Flat: "100ms", FlatPct: 25, Function: "c"},
	}, ParseTop(top))
}

func TestPprofTopOfAMutexProfileShowsDelay(t *testing.T) {
	mutex := func(contentions, delay int64) *profile.Profile {
		p := cpuProfile(stackSample{"main sync.(*Mutex).Unlock", delay})
		p.SampleType = []*profile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}}
		p.PeriodType = &profile.ValueType{Type: "contentions", Unit: "count"}
		p.Period = 1
		p.Sample[0].Value = []int64{contentions, delay}
		return p
	}
	top := topOf(t, mutex(10, millis(2)), mutex(1000, millis(5)), false)
	assert.Contains(t, top, "Type: delay\n")
	rows := ParseTop(top)
	require.Len(t, rows, 2)
	assert.Equal(t, TopRow{Flat: "3ms", FlatPct: 150, Function: "sync.(*Mutex).Unlock"}, rows[0], "delay, in units of time, of direct's delay")
}

// TestPprofTopTrims checks what pprof leaves out of a -top table: the
// functions under 0.5 % of the total, and all but the top 12; and that it
// marks inlined functions.
func TestPprofTopTrims(t *testing.T) {
	var baseSamples, profSamples []stackSample
	for _, f := range strings.Fields("f01 f02 f03 f04 f05 f06 f07 f08 f09 f10 f11 f12 f13 f14") {
		baseSamples = append(baseSamples, stackSample{"main " + f, millis(100)})
		profSamples = append(profSamples, stackSample{"main " + f, millis(100 + 10*int64(len(profSamples)))})
	}
	profSamples = append(profSamples, stackSample{"main tiny", 1}, stackSample{"main f14+step", millis(50)})
	dir := t.TempDir()
	base, prof := filepath.Join(dir, "base.pb.gz"), filepath.Join(dir, "prof.pb.gz")
	writeProfile(t, base, cpuProfile(baseSamples...))
	writeProfile(t, prof, cpuProfile(profSamples...))

	top, err := Top(t.Context(), base, prof, false)
	require.NoError(t, err)
	// f01 is the same in both, so it has no row at all; tiny's 1ns is
	// under 0.5 % of the total.
	assert.Contains(t, top, "\nDropped 1 node (cum <= 7ms)\n")
	assert.Contains(t, top, "\nShowing top 12 nodes out of 15\n")
	assert.NotContains(t, top, "tiny")
	rows := ParseTop(top)
	require.Len(t, rows, Nodes)
	assert.Equal(t, TopRow{Flat: "130ms", FlatPct: 9.29, Function: "f14"}, rows[0], "the largest flat first")
	assert.Equal(t, "f06", rows[8].Function, "f06 and step tie at 50ms: by name")
	assert.Equal(t, TopRow{Flat: "50ms", FlatPct: 3.57, Function: "step (inline)"}, rows[9])
	assert.Equal(t, "f04", rows[11].Function, "f03, f02 and main are not in the top 12")

	assertTopMatchesGoToolPprof(t, base, prof, false)
	assertTopMatchesGoToolPprof(t, base, prof, true)
}

func writeProfile(t *testing.T, path string, p *profile.Profile) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, p.Write(f))
	require.NoError(t, f.Close())
}

func TestParseTopOfADiff(t *testing.T) {
	top := `Type: cpu
Duration: 2.02s, Total samples = 20ms ( 0.99%)
Showing nodes accounting for 30ms, 150.00% of 20ms total
      flat  flat%   sum%        cum   cum%
      20ms   100%   100%       20ms   100%  internal/runtime/syscall/linux.Syscall6
     -30ms   150%    50%      -10ms 50.00%  runtime.lock2
      10ms 50.00% 150.00%       10ms 50.00%  github.com/kvpool/kvpool/internal/pool.(*lifoQueue).pop
         0     0% 150.00%       10ms 50.00%  bufio.(*Writer).Flush`
	rows := ParseTop(top)
	require.Len(t, rows, 4)
	assert.Equal(t, TopRow{Flat: "-30ms", FlatPct: -150, Function: "runtime.lock2"}, rows[1], "a negative flat makes the share negative")
	assert.Equal(t, "github.com/kvpool/kvpool/internal/pool.(*lifoQueue).pop", rows[2].Function)
	best, ok := LargestIncrease(rows)
	require.True(t, ok)
	assert.Equal(t, "internal/runtime/syscall/linux.Syscall6", best.Function, "the largest positive share, not the largest magnitude")
	_, ok = LargestIncrease(ParseTop("no table here"))
	assert.False(t, ok)
}
