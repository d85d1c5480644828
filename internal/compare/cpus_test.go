package compare

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/cpuset"
)

// onMachine is a check (cpuset.Set.Check) for a machine whose CPUs are
// online.
func onMachine(online string) func(cpuset.Set) error {
	all := cpuset.MustParse(online)
	return func(s cpuset.Set) error {
		if missing := s.Minus(all); !missing.IsEmpty() {
			return fmt.Errorf("CPUs %s are not on this machine (it has %s)", missing, all)
		}
		return nil
	}
}

func TestResolvePlacement(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the default split binds CPUs, which needs Linux")
	}
	// f resolves the lists on a machine (and affinity) of online CPUs and
	// wants the sets, or an error naming each of wantErr.
	f := func(online, preset, server, loader string, pin bool, wantServer, wantLoader string, wantErr ...string) {
		t.Helper()
		o := DefaultOptions()
		o.Preset, o.ServerCPUs, o.LoaderCPUs, o.Pin = preset, server, loader, pin
		p, err := resolvePlacement(&o, cpuset.MustParse(online), onMachine(online))
		if len(wantErr) > 0 {
			require.Error(t, err, "%s %q %q pin=%v", online, server, loader, pin)
			for _, w := range wantErr {
				assert.Contains(t, err.Error(), w)
			}
			return
		}
		require.NoError(t, err)
		assert.Equal(t, wantServer, p.Server.String(), "kvserver's CPUs (%s %q %q)", online, server, loader)
		assert.Equal(t, wantLoader, p.Loader.String(), "the loader's CPUs (%s %q %q)", online, server, loader)
		assert.Equal(t, wantServer == "", p.Shared())
		assert.NotEmpty(t, p.How, "the report says how the sets were chosen")
	}
	// The default: halves from 4 CPUs (the odd one to the loader),
	// shared below; the scaling preset splits from 2.
	f("0-15", "queues", "", "", false, "0-7", "8-15")
	f("0-4", "queues", "", "", false, "0-1", "2-4")
	f("0-3", "queues", "", "", false, "0-1", "2-3")
	f("0-2", "queues", "", "", false, "", "")
	f("0-1", "queues", "", "", false, "", "")
	f("0-1", "scaling", "", "", false, "0", "1")
	f("0", "scaling", "", "", false, "", "")
	// Both lists, one list (the other side gets the rest), -pin.
	f("0-15", "queues", "0-3", "8-15", false, "0-3", "8-15")
	f("0-15", "queues", "0-11", "", false, "0-11", "12-15")
	f("0-15", "queues", "", "12,14", false, "0-11,13,15", "12,14")
	f("0-1", "queues", "0", "", false, "0", "1")
	f("0-15", "queues", "", "", true, "0", "1")
	// Refused, naming the flag and the accepted form.
	f("0-15", "queues", "0-3", "3-7", false, "", "", "-server-cpus 0-3 and -loader-cpus 3-7 overlap (CPUs 3)", "disjoint lists such as")
	f("0-15", "queues", "0-16", "", false, "", "", "-server-cpus 0-16", "16", "not on this machine", "0-3 or 0,2")
	f("0-15", "queues", "", "99", false, "", "", "-loader-cpus 99", "not on this machine")
	f("0-15", "queues", "4-x", "", false, "", "", "-server-cpus", "write a list such as 0-7")
	f("0-15", "queues", "5-2", "8", false, "", "", "-server-cpus", "runs backwards")
	f("0-15", "queues", "", "0,,1", false, "", "", "-loader-cpus", "empty")
	f("0-1", "queues", "0-1", "", false, "", "", "-server-cpus 0-1 leaves none", "give -loader-cpus too")
	f("0-1", "queues", "", "0-1", false, "", "", "-loader-cpus 0-1 leaves none", "give -server-cpus too")
	f("0-15", "queues", "0", "", true, "", "", "-pin is shorthand for -server-cpus 0 -loader-cpus 1")
	f("0-15", "queues", "", "1", true, "", "", "-pin is shorthand")
	f("0", "queues", "", "", true, "", "", "-pin", "CPU 1", "not on this machine")
}

// TestValidateRefusesCPUsTheMachineLacks goes through the machine's own
// check: no machine here has CPU 1023 online.
func TestValidateRefusesCPUsTheMachineLacks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU sets need Linux")
	}
	o := DefaultOptions()
	o.ServerCPUs, o.LoaderCPUs = "0", "1023"
	err := o.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-loader-cpus 1023")
	assert.Contains(t, err.Error(), "not on this machine")
}

func TestScalingCounts(t *testing.T) {
	f := func(n int, want ...int) {
		t.Helper()
		assert.Equal(t, want, scalingCounts(n), "a server set of %d CPUs", n)
	}
	f(1, 1)
	f(2, 1, 2)
	f(3, 1, 2, 3)
	f(8, 1, 2, 4, 8)
	f(12, 1, 2, 4, 8, 12)
	f(16, 1, 2, 4, 8, 16)
}

// TestScalingPlan: a count is a variant per pool, direct first at each,
// each on the first n CPUs of the server's set; -pools restricts, -execs
// multiplies the queueing pools; quick runs GET only.
func TestScalingPlan(t *testing.T) {
	f := func(size int, wantCounts ...int) {
		t.Helper()
		o := DefaultOptions()
		o.Preset = "scaling"
		p, err := newPlan(&o, size)
		require.NoError(t, err)
		assert.Equal(t, wantCounts, p.Counts)
		assert.Equal(t, []string{"get", "put"}, p.Workloads)
		assert.True(t, p.SaturateAll && p.ClosedAll)
		assert.False(t, p.Fixed || p.Overload || p.Profiles)
		require.Len(t, p.Variants, len(wantCounts)*len(Pools))
		for i, n := range wantCounts {
			v := p.Variants[i*len(Pools)]
			assert.Equal(t, Variant{Pool: "direct", CPUs: n}, v)
			assert.Equal(t, fmt.Sprintf("direct cpus=%d", n), v.Name())
			assert.Equal(t, []string{"-pool", "direct"}, v.Args(), "the count is the CPU set's, not a flag")
		}
	}
	f(1, 1)
	f(2, 1, 2)
	f(3, 1, 2, 3)
	f(8, 1, 2, 4, 8)
	f(16, 1, 2, 4, 8, 16)

	o := DefaultOptions()
	o.Preset, o.Quick, o.Pools, o.Execs = "scaling", true, []string{"lifo"}, []string{"handler", "worker"}
	p, err := newPlan(&o, 2)
	require.NoError(t, err)
	var names []string
	for _, v := range p.Variants {
		names = append(names, v.Name())
	}
	assert.Equal(t, []string{"direct cpus=1", "lifo exec=handler cpus=1", "lifo exec=worker cpus=1", "direct cpus=2", "lifo exec=handler cpus=2", "lifo exec=worker cpus=2"}, names)
	assert.Equal(t, []string{"get"}, p.Workloads)

	r := &runner{pl: Placement{Server: cpuset.MustParse("4-7"), Loader: cpuset.MustParse("8-15")}}
	assert.Equal(t, "4-5", r.serverSet(Variant{Pool: "lifo", CPUs: 2}).String(), "the first CPUs of the server's set")
	assert.Equal(t, "4-7", r.serverSet(Variant{Pool: "lifo"}).String())
	r = &runner{pl: Placement{Affinity: cpuset.MustParse("0")}}
	assert.Equal(t, "0", r.serverSet(Variant{Pool: "lifo", CPUs: 1}).String(), "shared: counted from the affinity set")
	assert.True(t, r.serverSet(Variant{Pool: "lifo"}).IsEmpty(), "shared: not pinned")
}

func TestLittleConns(t *testing.T) {
	f := func(rate float64, w time.Duration, maxConns, want int) {
		t.Helper()
		assert.Equal(t, want, littleConns(rate, w, maxConns), "%v req/s × %v, at most %d", rate, w, maxConns)
	}
	f(268_000, 170*time.Microsecond, 4096, 92) // 2 × 45.56 in flight
	f(100_000, 2*time.Millisecond, 4096, 400)
	f(1000, time.Millisecond, 4096, minConns) // 2 in flight: at least 64
	f(500_000, 10*time.Millisecond, 4096, 4096)
	f(500_000, 10*time.Millisecond, 256, 256)
	f(268_000, 0, 4096, minConns) // unknown answer time
	f(0, time.Millisecond, 4096, minConns)
}

// TestAnswerTime: the W of Little's law is the p99 from the send of the
// passing search step nearest the rate, from the variant's own searches,
// else from direct's.
func TestAnswerTime(t *testing.T) {
	curve := func(points ...CurvePoint) []SatRun { return []SatRun{{Curve: points}} }
	v := &VariantResult{Sat: curve(
		CurvePoint{Asked: 10_000, Pass: true, P99FromSend: time.Millisecond},
		CurvePoint{Asked: 40_000, Pass: true, P99FromSend: 3 * time.Millisecond},
		CurvePoint{Asked: 70_000, Pass: false, P99FromSend: 90 * time.Millisecond},
	)}
	base := &VariantResult{Sat: curve(CurvePoint{Asked: 50_000, Pass: true, P99FromSend: 5 * time.Millisecond})}
	assert.Equal(t, 3*time.Millisecond, answerTime(v, base, 65_000), "the nearest passing step, not the failing one")
	assert.Equal(t, time.Millisecond, answerTime(v, base, 12_000))
	assert.Equal(t, 5*time.Millisecond, answerTime(&VariantResult{}, base, 65_000), "no search of its own: direct's")
	assert.Zero(t, answerTime(&VariantResult{}, nil, 65_000))
	old := &VariantResult{Sat: curve(CurvePoint{Asked: 10_000, Pass: true})}
	assert.Zero(t, answerTime(old, nil, 10_000), "an older comparison did not record it")
}
