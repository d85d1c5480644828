package compare

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
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
		o := plan.DefaultOptions()
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
	// The metastable preset: one CPU each wherever there are two.
	f("0-15", "metastable", "", "", false, "0", "1")
	f("2-3,6", "metastable", "", "", false, "2", "3")
	f("0", "metastable", "", "", false, "", "")
	f("0-15", "metastable", "0-3", "", false, "0-3", "4-15")
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
	o := plan.DefaultOptions()
	o.ServerCPUs, o.LoaderCPUs = "0", "1023"
	_, err := Validate(o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-loader-cpus 1023")
	assert.Contains(t, err.Error(), "not on this machine")
}

// TestServerSet: a scaling variant runs on the first n CPUs of the
// server's set, or of the affinity set where the two share.
func TestServerSet(t *testing.T) {
	r := Placement{Server: cpuset.MustParse("4-7"), Loader: cpuset.MustParse("8-15")}
	assert.Equal(t, "4-5", r.serverSet(plan.Variant{Pool: "lifo", CPUs: 2}).String(), "the first CPUs of the server's set")
	assert.Equal(t, "4-7", r.serverSet(plan.Variant{Pool: "lifo"}).String())
	r = Placement{Affinity: cpuset.MustParse("0")}
	assert.Equal(t, "0", r.serverSet(plan.Variant{Pool: "lifo", CPUs: 1}).String(), "shared: counted from the affinity set")
	assert.True(t, r.serverSet(plan.Variant{Pool: "lifo"}).IsEmpty(), "shared: not pinned")
}
