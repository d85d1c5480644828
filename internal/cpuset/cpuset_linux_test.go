package cpuset

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// childEnv makes the test binary, run again as a child, play the part
// named by its value instead of running tests.
const childEnv = "CPUSET_TEST_CHILD"

// allowedList reads the Cpus_allowed_list line of a /proc status file.
func allowedList(t *testing.T, status []byte) Set {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			s, err := Parse(v)
			require.NoError(t, err)
			return s
		}
	}
	t.Fatalf("no Cpus_allowed_list in %q", status)
	return Set{}
}

// threadMasks is the allowed CPUs of every thread of this process, by
// thread id; a thread that ends while they are read is left out.
func threadMasks(t *testing.T) map[string]Set {
	t.Helper()
	paths, err := filepath.Glob("/proc/self/task/*/status")
	require.NoError(t, err)
	masks := map[string]Set{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		masks[filepath.Base(filepath.Dir(p))] = allowedList(t, b)
	}
	require.NotEmpty(t, masks)
	return masks
}

// twoCPUs is this process's affinity, skipping the test where it has
// fewer than two CPUs, so that binding to one of them is a change.
func twoCPUs(t *testing.T) Set {
	t.Helper()
	may, err := Affinity()
	require.NoError(t, err)
	if may.Len() < 2 {
		t.Skipf("this process may run on %s only; binding needs two CPUs to show", may)
	}
	return may
}

// assertThreadsOn checks that every thread of this process may run on
// exactly want: none was left bound elsewhere.
func assertThreadsOn(t *testing.T, want Set) {
	t.Helper()
	for tid, m := range threadMasks(t) {
		assert.Equal(t, want.String(), m.String(), "thread %s", tid)
	}
}

// TestPinThread binds the test's own locked thread to one CPU, then to a
// set, reads the mask back from the kernel and from /proc, and restores it.
func TestPinThread(t *testing.T) {
	may := twoCPUs(t)
	runtime.LockOSThread()
	var prev unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &prev))
	defer func() {
		// Unlocked only once restored; else the thread ends with the test.
		if unix.SchedSetaffinity(0, &prev) == nil {
			runtime.UnlockOSThread()
		}
	}()

	cpu := may.CPUs()[0]
	require.NoError(t, PinThread(cpu))
	var got unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &got))
	assert.Equal(t, Of(cpu), fromUnix(&got))
	status, err := os.ReadFile("/proc/thread-self/status")
	require.NoError(t, err)
	assert.Equal(t, Of(cpu), allowedList(t, status))

	require.NoError(t, PinThreadSet(may))
	require.NoError(t, unix.SchedGetaffinity(0, &got))
	assert.Equal(t, may, fromUnix(&got))

	assert.ErrorContains(t, PinThread(-1), "CPU -1: CPUs are numbered 0 to 1023")
	assert.ErrorContains(t, PinThreadSet(Set{}), "no CPUs; write a list such as 0-7 or 0,2,4-5")
	online, err := Online()
	require.NoError(t, err)
	if !online.Contains(MaxCPU) {
		err := PinThread(MaxCPU)
		assert.ErrorContains(t, err, "cannot bind this thread to CPUs 1023")
		assert.ErrorContains(t, err, "this process may run on "+may.String()+" only")
	}
	require.NoError(t, unix.SchedGetaffinity(0, &got))
	assert.Equal(t, may, fromUnix(&got), "a refused binding changed the mask")
}

// TestStart: a child started on one CPU may run on that CPU alone from
// the start, and no thread of this process is left bound to it.
func TestStart(t *testing.T) {
	may := twoCPUs(t)
	assertThreadsOn(t, may)
	for _, cpu := range may.First(2).CPUs() {
		var out bytes.Buffer
		cmd := exec.Command("/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status")
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, Start(cmd, Of(cpu)))
		require.NoError(t, cmd.Wait(), out.String())
		assert.Equal(t, "Cpus_allowed_list:\t"+strconv.Itoa(cpu)+"\n", out.String())
		assertThreadsOn(t, may)
	}

	// An empty set is a plain start: the child gets this thread's mask.
	var out bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status")
	cmd.Stdout = &out
	require.NoError(t, Start(cmd, Set{}))
	require.NoError(t, cmd.Wait())
	assert.Equal(t, "Cpus_allowed_list:\t"+may.String()+"\n", out.String())
}

// TestStartOutlivesThreadsThatEnd: a child whose parent-death signal is
// SIGKILL (as the harness starts kvserver) keeps running while goroutines
// end locked to their threads, which ends those threads, as pinned load
// loops do: the kernel sends that signal when the thread that forked the
// child exits, and Start forks from a thread that never does. Forked from
// an ordinary thread, the child was killed as soon as that thread, back
// in the runtime's pool, ended under a locked goroutine.
func TestStartOutlivesThreadsThatEnd(t *testing.T) {
	may := twoCPUs(t)
	for _, s := range []Set{{}, may.First(1)} {
		cmd := exec.Command("/bin/sleep", "60")
		cmd.SysProcAttr = &unix.SysProcAttr{Pdeathsig: unix.SIGKILL}
		require.NoError(t, Start(cmd, s))
		// End many threads, one after another, so that every thread the
		// runtime had when the child was forked gets reused and ended.
		for range 200 {
			done := make(chan struct{})
			go func() {
				runtime.LockOSThread()
				close(done) // and end locked: the runtime ends this thread
			}()
			<-done
			runtime.Gosched()
		}
		var ws unix.WaitStatus
		pid, err := unix.Wait4(cmd.Process.Pid, &ws, unix.WNOHANG, nil)
		require.NoError(t, err)
		if !assert.Zero(t, pid, "set %q: the child ended (%v) when a thread did", s, ws) {
			continue // Wait4 reaped it
		}
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
	}
}

// TestStartGOMAXPROCS: a Go child started on one CPU sizes its scheduler
// to it, as it would under taskset.
func TestStartGOMAXPROCS(t *testing.T) {
	if os.Getenv(childEnv) == "gomaxprocs" {
		os.Stdout.WriteString("gomaxprocs=" + strconv.Itoa(runtime.GOMAXPROCS(0)) + "\n")
		os.Exit(0)
	}
	may := twoCPUs(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartGOMAXPROCS$")
	cmd.Env = append(os.Environ(), childEnv+"=gomaxprocs", "GOMAXPROCS=", "GORACE=atexit_sleep_ms=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, Start(cmd, may.First(1)))
	require.NoError(t, cmd.Wait(), out.String())
	assert.Equal(t, "gomaxprocs=1\n", out.String())
	assertThreadsOn(t, may)
}

// TestStartFailures: a binary that cannot run and a set the kernel
// refuses are errors, and leave no thread bound.
func TestStartFailures(t *testing.T) {
	may := twoCPUs(t)
	err := Start(exec.Command(filepath.Join(t.TempDir(), "nonesuch")), may.First(1))
	assert.ErrorContains(t, err, "nonesuch")
	assertThreadsOn(t, may)

	online, err := Online()
	require.NoError(t, err)
	if online.Contains(MaxCPU) {
		t.Skipf("CPU %d is online; no CPU to be refused", MaxCPU)
	}
	cmd := exec.Command("/bin/true")
	err = Start(cmd, Of(MaxCPU))
	assert.ErrorContains(t, err, "cannot bind the thread starting /bin/true to CPUs 1023")
	assert.ErrorContains(t, err, "this process may run on "+may.String()+" only")
	assert.Nil(t, cmd.Process, "started a child after all")
	assertThreadsOn(t, may)
}

// TestPinProcess runs PinProcess in a child (it would pin this test
// binary otherwise): every thread of the child, those there before and
// those started after, is left on the one CPU.
func TestPinProcess(t *testing.T) {
	if v, ok := strings.CutPrefix(os.Getenv(childEnv), "pin-process="); ok {
		pinProcessChild(v)
		return
	}
	may := twoCPUs(t)
	target := Of(may.CPUs()[may.Len()-1])
	cmd := exec.Command(os.Args[0], "-test.run=^TestPinProcess$")
	cmd.Env = append(os.Environ(), childEnv+"=pin-process="+target.String(), "GORACE=atexit_sleep_ms=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)
	var before, after int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		phase, cpus, ok := strings.Cut(line, " ")
		require.True(t, ok, "child: %s", out)
		assert.Equal(t, target.String(), cpus, "a thread (%s) not on %s: %s", phase, target, out)
		switch phase {
		case "existing":
			before++
		case "new":
			after++
		}
	}
	assert.Positive(t, before, "child: %s", out)
	assert.Equal(t, 4, after, "child: %s", out)
}

// pinProcessChild pins itself to list, then starts threads of its own
// (a locked goroutine each, all held at once, so each has a thread of its
// own) and prints every thread's allowed CPUs.
func pinProcessChild(list string) {
	fail := func(err error) {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	if err := PinProcess(MustParse(list)); err != nil {
		fail(err)
	}
	paths, _ := filepath.Glob("/proc/self/task/*/status")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			os.Stdout.WriteString("existing " + statusList(b) + "\n")
		}
	}
	const threads = 4
	var reported, held sync.WaitGroup
	reported.Add(threads)
	held.Add(1)
	lines := make([]string, threads)
	for i := range threads {
		go func() {
			runtime.LockOSThread()
			b, err := os.ReadFile("/proc/thread-self/status")
			if err != nil {
				fail(err)
			}
			lines[i] = "new " + statusList(b) + "\n"
			reported.Done()
			held.Wait()
		}()
	}
	reported.Wait()
	for _, l := range lines {
		os.Stdout.WriteString(l)
	}
	held.Done()
	os.Exit(0)
}

func statusList(status []byte) string {
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "none"
}
