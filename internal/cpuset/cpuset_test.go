package cpuset

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParse: accepted lists read to the set whose canonical String is
// want, and String reads back to the same set.
func TestParse(t *testing.T) {
	f := func(in, want string, cpus ...int) {
		t.Helper()
		s, err := Parse(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, s.String(), in)
		assert.Equal(t, Of(cpus...), s, in)
		assert.Equal(t, cpus, s.CPUs(), in)
		assert.Equal(t, len(cpus), s.Len(), in)
		back, err := Parse(s.String())
		require.NoError(t, err, in)
		assert.Equal(t, s, back, "String %q does not read back", s)
	}
	f("3", "3", 3)
	f("0-7", "0-7", 0, 1, 2, 3, 4, 5, 6, 7)
	f("0,2,4-5", "0,2,4-5", 0, 2, 4, 5)
	f("0-1", "0-1", 0, 1)
	f("0,1", "0-1", 0, 1)
	f("1,0", "0-1", 0, 1)
	f("5-5", "5", 5)
	f("0-3,2-5", "0-5", 0, 1, 2, 3, 4, 5)
	f("3,3,3", "3", 3)
	f("8,0-3,10-11", "0-3,8,10-11", 0, 1, 2, 3, 8, 10, 11)
	f("0-1\n", "0-1", 0, 1) // as /sys/devices/system/cpu/online ends
	f(" 2 ", "2", 2)
	f("007", "7", 7)
	f("63-64,127-128", "63-64,127-128", 63, 64, 127, 128)
	f("1023", "1023", 1023)
}

// TestParseRefusals: each refusal says what is wrong and names the
// accepted form.
func TestParseRefusals(t *testing.T) {
	f := func(in, why string) {
		t.Helper()
		_, err := Parse(in)
		require.Error(t, err, in)
		assert.Equal(t, fmt.Sprintf("cpu list %q: %s; write a list such as 0-7 or 0,2,4-5", in, why), err.Error())
	}
	f("", "no CPUs named")
	f("  ", "no CPUs named")
	f("0,,1", "item 2 is empty")
	f(",0", "item 1 is empty")
	f("0,", "item 2 is empty")
	f("5-2", "range 5-2 runs backwards")
	f("-1", `"-1": CPU numbers are not negative`)
	f("0,-3", `"-3": CPU numbers are not negative`)
	f("x", `"x" is not a CPU number or a range of them`)
	f("1-x", `"1-x" is not a CPU number or a range of them`)
	f("1-", `"1-" is not a CPU number or a range of them`)
	f("1-2-3", `"1-2-3" is not a CPU number or a range of them`)
	f("+1", `"+1" is not a CPU number or a range of them`)
	f("0, 1", `" 1" is not a CPU number or a range of them`)
	f("0-8:2", `"0-8:2" is not a CPU number or a range of them`)
	f("1024", "CPU 1024 is above 1023, the highest this lab can bind")
	f("0-2000", "CPU 2000 is above 1023, the highest this lab can bind")
	f("99999999999999999999", "CPU 99999999999999999999 is above 1023, the highest this lab can bind")
}

func TestMustParseAndOf(t *testing.T) {
	assert.Equal(t, Of(0, 2, 3), MustParse("0,2-3"))
	assert.Equal(t, Of(1), Of(1, 1))
	assert.Panics(t, func() { MustParse("5-2") })
	assert.Panics(t, func() { Of(-1) })
	assert.Panics(t, func() { Of(MaxCPU + 1) })
}

func TestEmpty(t *testing.T) {
	var zero Set
	assert.True(t, zero.IsEmpty())
	assert.Equal(t, "", zero.String())
	assert.Equal(t, 0, zero.Len())
	assert.Nil(t, zero.CPUs())
	assert.False(t, zero.Contains(0))
	assert.False(t, Of(0).IsEmpty())
	assert.True(t, Of(3).Minus(Of(3)).IsEmpty())
}

func TestContainsOverlaps(t *testing.T) {
	s := MustParse("0-3,64,1023")
	for _, c := range []int{0, 3, 64, 1023} {
		assert.True(t, s.Contains(c), c)
	}
	for _, c := range []int{-1, 4, 63, 65, 1022, 1024} {
		assert.False(t, s.Contains(c), c)
	}
	f := func(a, b string, want bool) {
		t.Helper()
		assert.Equal(t, want, MustParse(a).Overlaps(MustParse(b)), "%s and %s", a, b)
		assert.Equal(t, want, MustParse(b).Overlaps(MustParse(a)), "%s and %s", b, a)
	}
	f("0", "0", true)
	f("0", "1", false)
	f("0-3", "3-5", true)
	f("0-3", "4-7", false)
	f("0,64", "1,65", false)
	f("0,64", "64", true)
	assert.False(t, Set{}.Overlaps(MustParse("0-1023")))
	assert.Equal(t, MustParse("2-3"), MustParse("0-3").Intersect(MustParse("2-5")))
	assert.Equal(t, MustParse("0-1"), MustParse("0-3").Minus(MustParse("2-5")))
}

// TestHalves: lower holds the floor(n/2) lowest CPUs, upper the rest; the
// halves are disjoint and make up the set.
func TestHalves(t *testing.T) {
	f := func(in, lower, upper string) {
		t.Helper()
		s := Set{}
		if in != "" {
			s = MustParse(in)
		}
		lo, up := s.Halves()
		assert.Equal(t, lower, lo.String(), "lower half of %q", in)
		assert.Equal(t, upper, up.String(), "upper half of %q", in)
		assert.False(t, lo.Overlaps(up))
		assert.Equal(t, s.Len(), lo.Len()+up.Len())
	}
	f("", "", "")
	f("5", "", "5")
	f("0-1", "0", "1")
	f("0-2", "0", "1-2")
	f("0-3", "0-1", "2-3")
	f("0-15", "0-7", "8-15")
	f("0-6", "0-2", "3-6")
	f("0,2,4,6", "0,2", "4,6")
	f("60-67", "60-63", "64-67")
	f("0,1000-1002", "0,1000", "1001-1002")
}

func TestFirst(t *testing.T) {
	f := func(in string, n int, want string) {
		t.Helper()
		assert.Equal(t, want, MustParse(in).First(n).String(), "First(%d) of %s", n, in)
	}
	f("0-7", 3, "0-2")
	f("0-7", 8, "0-7")
	f("0-7", 100, "0-7")
	f("0-7", 0, "")
	f("0-7", -1, "")
	f("2,5,9", 2, "2,5")
	f("0-63,64-70", 65, "0-64")
	f("63,64,1023", 3, "63-64,1023")
	f("63,64,1023", 2, "63-64")
}

// TestCheck: an empty set and CPUs the machine lacks are refused, naming
// them and the CPUs it has; its own CPUs pass.
func TestCheck(t *testing.T) {
	online, err := Online()
	require.NoError(t, err)
	require.False(t, online.IsEmpty())
	assert.NoError(t, online.Check())
	assert.NoError(t, online.First(1).Check())

	assert.EqualError(t, Set{}.Check(), "no CPUs given; write a list such as 0-7 or 0,2,4-5")

	cpus := online.CPUs()
	beyond := cpus[len(cpus)-1] + 1
	if beyond+1 > MaxCPU {
		t.Skipf("this machine has every CPU up to %d online", MaxCPU)
	}
	one := Of(cpus[0], beyond)
	assert.EqualError(t, one.Check(), "CPU "+strconv.Itoa(beyond)+" is not on this machine (it has "+online.String()+")")
	two := Of(cpus[0], beyond, beyond+1)
	assert.EqualError(t, two.Check(), fmt.Sprintf("CPUs %d-%d are not on this machine (it has %s)", beyond, beyond+1, online))
}

// TestAffinityWithinOnline: the process may run only on CPUs the machine
// has, and on at least one.
func TestAffinityWithinOnline(t *testing.T) {
	may, err := Affinity()
	require.NoError(t, err)
	online, err := Online()
	require.NoError(t, err)
	assert.False(t, may.IsEmpty())
	assert.True(t, may.Minus(online).IsEmpty(), "affinity %s outside online %s", may, online)
}
