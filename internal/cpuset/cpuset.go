// Package cpuset names sets of CPUs in Linux cpu-list syntax ("0-7",
// "0,2,4-5") and binds threads, this process and child processes to them,
// so that kvserver and the loader each run on CPUs of their own. It does
// with sched_setaffinity what taskset does, with no binary to install.
// Use is how much of its CPUs a side (the loader, the server) used, and
// whether that ran it out of CPU.
package cpuset

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// MaxCPU is the highest CPU number a Set holds: 1023, as in the kernel's
// and glibc's fixed cpu_set_t, which the affinity calls here use.
const MaxCPU = 1023

const words = (MaxCPU + 1) / 64

// Set is a set of CPU numbers from 0 to MaxCPU. It is an immutable value,
// comparable with ==; the zero Set is empty.
type Set struct {
	mask [words]uint64
}

// listForm ends every error about a cpu list: what is accepted.
const listForm = "write a list such as 0-7 or 0,2,4-5"

// Parse reads a CPU list in Linux cpu-list syntax: items separated by
// commas, each a CPU number ("3") or an inclusive range ("4-7"), as
// taskset -c and /sys/devices/system/cpu/online write them. Items may
// overlap or repeat; they are merged. Space around the whole list is
// ignored. Refused, with an error that names the accepted form: an empty
// list, an empty item ("0,,1"), a range that runs backwards ("5-2"), a
// negative or non-numeric item, and a CPU above MaxCPU.
func Parse(s string) (Set, error) {
	list := strings.TrimSpace(s)
	bad := func(format string, args ...any) (Set, error) {
		return Set{}, fmt.Errorf("cpu list %q: %s; %s", s, fmt.Sprintf(format, args...), listForm)
	}
	if list == "" {
		return bad("no CPUs named")
	}
	var set Set
	for i, item := range strings.Split(list, ",") {
		if item == "" {
			return bad("item %d is empty", i+1)
		}
		loText, hiText, isRange := strings.Cut(item, "-")
		if !isRange {
			hiText = loText
		}
		if loText == "" && isRange {
			return bad("%q: CPU numbers are not negative", item)
		}
		texts, ends := []string{loText, hiText}, [2]int{}
		for i, text := range texts {
			var ok bool
			if ends[i], ok = cpuNumber(text); !ok {
				return bad("%q is not a CPU number or a range of them", item)
			}
		}
		for i, text := range texts {
			if ends[i] > MaxCPU {
				return bad("CPU %s is above %d, the highest this lab can bind", text, MaxCPU)
			}
		}
		if ends[1] < ends[0] {
			return bad("range %d-%d runs backwards", ends[0], ends[1])
		}
		for c := ends[0]; c <= ends[1]; c++ {
			set.add(c)
		}
	}
	return set, nil
}

// add puts cpu, from 0 to MaxCPU, in s.
func (s *Set) add(cpu int) { s.mask[cpu/64] |= 1 << (cpu % 64) }

// cpuNumber reads a decimal number of digits only: no sign, no space.
// One too large for an int reads as MaxCPU+1, to be refused as too high.
func cpuNumber(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return MaxCPU + 1, true
	}
	return n, true
}

// MustParse is Parse for constants and tests: it panics on an error.
func MustParse(s string) Set {
	set, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return set
}

// Of is the set of the given CPUs; repeats are merged. It panics on a
// number outside 0..MaxCPU, a programming error (Parse checks input).
func Of(cpus ...int) Set {
	var set Set
	for _, c := range cpus {
		if c < 0 || c > MaxCPU {
			panic(fmt.Sprintf("cpuset.Of: CPU %d is outside 0-%d", c, MaxCPU))
		}
		set.add(c)
	}
	return set
}

// String is the canonical cpu list: ascending, runs of two or more CPUs
// as ranges ("0-3,8,10-11"), "" for the empty set. Parse reads it back to
// the same Set.
func (s Set) String() string {
	var runs []string
	cpus := s.CPUs()
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		run := strconv.Itoa(cpus[i])
		if j > i {
			run += "-" + strconv.Itoa(cpus[j])
		}
		runs = append(runs, run)
		i = j + 1
	}
	return strings.Join(runs, ",")
}

// Len is how many CPUs s holds.
func (s Set) Len() int {
	n := 0
	for _, w := range s.mask {
		n += bits.OnesCount64(w)
	}
	return n
}

// IsEmpty reports whether s holds no CPU.
func (s Set) IsEmpty() bool { return s == Set{} }

// CPUs are the CPUs of s in ascending order; nil for the empty set.
func (s Set) CPUs() []int {
	var cpus []int
	for i, w := range s.mask {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			cpus = append(cpus, i*64+b)
			w &^= 1 << b
		}
	}
	return cpus
}

// Contains reports whether cpu is in s.
func (s Set) Contains(cpu int) bool {
	return cpu >= 0 && cpu <= MaxCPU && s.mask[cpu/64]&(1<<(cpu%64)) != 0
}

// Overlaps reports whether s and o have a CPU in common.
func (s Set) Overlaps(o Set) bool {
	return !s.Intersect(o).IsEmpty()
}

// Intersect is the set of CPUs in both s and o.
func (s Set) Intersect(o Set) Set {
	for i := range s.mask {
		s.mask[i] &= o.mask[i]
	}
	return s
}

// Minus is the set of CPUs in s and not in o.
func (s Set) Minus(o Set) Set {
	for i := range s.mask {
		s.mask[i] &^= o.mask[i]
	}
	return s
}

// Halves splits s by CPU number into two disjoint sets whose union is s:
// lower holds the Len()/2 lowest CPUs, upper the rest. On an odd count the
// extra CPU goes to upper, and a one-CPU set gives an empty lower: the
// lab's default split (on a machine with 4 CPUs or more) puts kvserver on
// lower and the loader on upper, and a loader short of CPU distorts every
// latency it records, while a server short of one only measures slower.
func (s Set) Halves() (lower, upper Set) {
	lower = s.First(s.Len() / 2)
	return lower, s.Minus(lower)
}

// First is the set of the n lowest CPUs of s: all of s if n >= Len(),
// empty if n <= 0.
func (s Set) First(n int) Set {
	cpus := s.CPUs()
	return Of(cpus[:max(0, min(n, len(cpus)))]...)
}

// Check refuses an empty set and one naming CPUs this machine does not
// have online (see Online), naming them: "CPU 17 is not on this machine
// (it has 0-15)". A set that passes may still be refused by the pinning
// calls where this process's cgroup or affinity excludes some of it.
func (s Set) Check() error {
	if s.IsEmpty() {
		return fmt.Errorf("no CPUs given; %s", listForm)
	}
	online, err := Online()
	if err != nil {
		return err
	}
	missing := s.Minus(online)
	switch missing.Len() {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("CPU %s is not on this machine (it has %s)", missing, online)
	default:
		return fmt.Errorf("CPUs %s are not on this machine (it has %s)", missing, online)
	}
}

// upTo is the set 0..n-1 (clamped to MaxCPU): the fallback where the
// machine cannot say which CPUs it has.
func upTo(n int) Set {
	var s Set
	for c := range min(n, MaxCPU+1) {
		s.add(c)
	}
	return s
}
