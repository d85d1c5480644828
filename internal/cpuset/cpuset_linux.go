package cpuset

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// onlinePath lists the CPUs the kernel has online, in cpu-list syntax.
const onlinePath = "/sys/devices/system/cpu/online"

// Affinity is the set of CPUs this process may run on: the affinity mask
// of its main thread, as taskset -p shows it.
func Affinity() (Set, error) {
	var m unix.CPUSet
	if err := unix.SchedGetaffinity(unix.Getpid(), &m); err != nil {
		return Set{}, fmt.Errorf("cannot read this process's CPU affinity: %w", err)
	}
	return fromUnix(&m), nil
}

// Online is the set of CPUs this machine has online, read from
// /sys/devices/system/cpu/online; where that cannot be read, it is
// 0..runtime.NumCPU()-1.
func Online() (Set, error) {
	if b, err := os.ReadFile(onlinePath); err == nil {
		if s, err := Parse(string(b)); err == nil {
			return s, nil
		}
	}
	return upTo(runtime.NumCPU()), nil
}

// PinThread binds the calling OS thread to cpu alone. The caller must
// hold runtime.LockOSThread for as long as the binding is to last, and
// restore the thread's mask before unlocking it (or end its goroutine
// locked, which ends the thread): an unlocked thread goes back to the
// runtime and runs any goroutine.
func PinThread(cpu int) error {
	if cpu < 0 || cpu > MaxCPU {
		return fmt.Errorf("cannot pin this thread to CPU %d: CPUs are numbered 0 to %d", cpu, MaxCPU)
	}
	return PinThreadSet(Of(cpu))
}

// PinThreadSet binds the calling OS thread to s, under the same rules as
// PinThread. An empty s is an error.
func PinThreadSet(s Set) error {
	if s.IsEmpty() {
		return fmt.Errorf("cannot pin this thread to no CPUs; %s", listForm)
	}
	m := s.toUnix()
	if err := unix.SchedSetaffinity(0, &m); err != nil {
		return bindError("this thread", s, err)
	}
	return nil
}

// PinProcess binds every thread of this process (/proc/self/task) to s.
// Threads started later inherit the mask: the kernel copies it from the
// thread that clones them, and once a listing of the threads shows none
// that was not already bound, every thread that can clone is bound. An
// empty s is an error.
//
// It does not change GOMAXPROCS, which the runtime sized to the CPUs it
// had at start and otherwise revisits only about once a second (and never
// once GOMAXPROCS was set explicitly). Callers that want the scheduler
// sized to s call runtime.GOMAXPROCS(s.Len()) themselves.
func PinProcess(s Set) error {
	if s.IsEmpty() {
		return fmt.Errorf("cannot pin this process to no CPUs; %s", listForm)
	}
	m := s.toUnix()
	bound := map[int]bool{}
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("cannot list this process's threads to pin them to CPUs %s: %w", s, err)
		}
		fresh := 0
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || bound[tid] {
				continue
			}
			fresh++
			// ESRCH: the thread ended since the listing.
			if err := unix.SchedSetaffinity(tid, &m); err != nil && !errors.Is(err, unix.ESRCH) {
				return bindError(fmt.Sprintf("thread %d of this process", tid), s, err)
			}
			bound[tid] = true
		}
		if fresh == 0 {
			return nil
		}
	}
}

// Start starts cmd (cmd.Start) with the child bound to s from its first
// instruction, so that a Go child sizes GOMAXPROCS to s.Len(), as under
// taskset -c. The child is forked from an OS thread locked for the
// purpose and bound to s for that moment only (it inherits the thread's
// mask); the thread's own mask is then restored and the thread returned
// to the runtime, or, if restoring fails, the thread ends and the child
// is killed and waited for. On any error nothing is left running. An
// empty s is a plain cmd.Start().
//
// A cmd.SysProcAttr.Pdeathsig ties the child to the thread that forked
// it, which goes back to the runtime's pool as after a plain cmd.Start.
func Start(cmd *exec.Cmd, s Set) error {
	if s.IsEmpty() {
		return cmd.Start()
	}
	want := s.toUnix()
	done := make(chan error, 1)
	go func() {
		// No UnlockOSThread unless the thread's mask is back as it was:
		// a goroutine that ends locked ends its thread, so a thread left
		// bound to s never runs anything else.
		runtime.LockOSThread()
		var prev unix.CPUSet
		if err := unix.SchedGetaffinity(0, &prev); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("cannot start %s on CPUs %s: cannot read this thread's CPU affinity: %w", cmd.Path, s, err)
			return
		}
		if err := unix.SchedSetaffinity(0, &want); err != nil {
			runtime.UnlockOSThread()
			done <- bindError("the thread starting "+cmd.Path, s, err)
			return
		}
		startErr := cmd.Start()
		if err := unix.SchedSetaffinity(0, &prev); err != nil {
			if startErr == nil {
				cmd.Process.Kill()
				cmd.Wait()
			}
			done <- fmt.Errorf("cannot start %s on CPUs %s: cannot restore the starting thread's CPU affinity (%s): %w; stopped the child", cmd.Path, s, fromUnix(&prev), err)
			return
		}
		runtime.UnlockOSThread()
		done <- startErr
	}()
	return <-done
}

// bindError says which thread could not be bound to s and, where the
// kernel refused the set itself, which CPUs this process may use.
func bindError(what string, s Set, err error) error {
	if errors.Is(err, unix.EINVAL) {
		if may, aerr := Affinity(); aerr == nil {
			return fmt.Errorf("cannot bind %s to CPUs %s: %w; this process may run on %s only", what, s, err, may)
		}
	}
	return fmt.Errorf("cannot bind %s to CPUs %s: %w", what, s, err)
}

func (s Set) toUnix() unix.CPUSet {
	var m unix.CPUSet
	for _, c := range s.CPUs() {
		m.Set(c)
	}
	return m
}

func fromUnix(m *unix.CPUSet) Set {
	var s Set
	for c := 0; c <= MaxCPU; c++ {
		if m.IsSet(c) {
			s.mask[c/64] |= 1 << (c % 64)
		}
	}
	return s
}
