package cpuset

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"

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
// taskset -c; an empty s leaves the child this process's own mask. Every
// child is forked from one OS thread that lives as long as the process
// (the starter), bound to s for that moment only (the child inherits the
// thread's mask) and then restored. On any error nothing is left running.
//
// Why one thread: a cmd.SysProcAttr.Pdeathsig (the harness sets SIGKILL,
// so that no server outlives an interrupted run) is sent when the thread
// that forked the child exits, not the process, and a Go thread exits
// whenever a goroutine ends locked to it, as a pinned load loop's does. A
// child forked from an ordinary thread was killed whenever that thread,
// back in the runtime's pool, later ran a pinned loop: a kvserver died in
// the middle of a comparison, its log cut short, "exit -1" and no
// message. The starter's goroutine never ends.
func Start(cmd *exec.Cmd, s Set) error {
	var err error
	onStarter(func(st *starterThread) { err = st.start(cmd, s) })
	return err
}

// starterThread is the thread every child is forked from, and the mask to
// give a child started with no set (the process's, read when the thread
// was made).
type starterThread struct {
	own    unix.CPUSet
	ownErr error
}

var starter struct {
	once sync.Once
	jobs chan func(*starterThread)
}

// onStarter runs f on the starter thread, making it on first use, and
// waits for it.
func onStarter(f func(*starterThread)) {
	starter.once.Do(func() {
		starter.jobs = make(chan func(*starterThread))
		go func() {
			runtime.LockOSThread() // for good: this goroutine never ends
			st := &starterThread{}
			st.ownErr = unix.SchedGetaffinity(unix.Getpid(), &st.own) // the process's, as the main thread has it
			for job := range starter.jobs {
				job(st)
			}
		}()
	})
	done := make(chan struct{})
	starter.jobs <- func(st *starterThread) {
		defer close(done)
		f(st)
	}
	<-done
}

// start forks cmd from the starter thread bound to s, or to the thread's
// own mask for an empty s, and restores the thread's mask.
func (st *starterThread) start(cmd *exec.Cmd, s Set) error {
	if st.ownErr != nil {
		if s.IsEmpty() {
			return cmd.Start() // the thread's mask, whatever it is
		}
		return fmt.Errorf("cannot start %s on CPUs %s: cannot read this thread's CPU affinity: %w", cmd.Path, s, st.ownErr)
	}
	// Every start sets the mask it forks with, so that a restore that
	// failed after an earlier one leaves nothing behind.
	want := st.own
	if !s.IsEmpty() {
		want = s.toUnix()
	}
	if err := unix.SchedSetaffinity(0, &want); err != nil {
		return bindError("the thread starting "+cmd.Path, fromUnix(&want), err)
	}
	startErr := cmd.Start()
	if err := unix.SchedSetaffinity(0, &st.own); err != nil {
		if startErr == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		return fmt.Errorf("cannot start %s on CPUs %s: cannot restore the starting thread's CPU affinity (%s): %w; stopped the child", cmd.Path, fromUnix(&want), fromUnix(&st.own), err)
	}
	return startErr
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
			s.add(c)
		}
	}
	return s
}
