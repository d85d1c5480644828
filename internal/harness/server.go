// Package harness runs a kvserver binary as a process, the way a user
// would: it starts it on a free loopback port and its own data directory,
// waits until it answers, reads its configuration, CPU time and memory,
// captures its profiles, and stops it. Every tool and end-to-end test that
// needs a real kvserver goes through it rather than its own start-and-poll.
package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
)

// Options say how to start a kvserver.
type Options struct {
	Binary string   // the kvserver binary
	Args   []string // flags besides -addr and -data, which the harness sets first (a later flag wins)
	// Argv, if set, is the whole command line instead of Binary, -addr,
	// -data and Args: a server other than kvserver that answers its API
	// (loadtest bare-server, the floor to measure kvserver against). It
	// must listen where it says in a "serving" line as kvserver logs it,
	// or a line "listening on http://ADDR"; no data directory is made.
	Argv []string
	// DataDir is the store's directory; "" makes a fresh one under TempDir,
	// which Stop, Kill and Cleanup remove once the process has ended.
	DataDir string
	// SeedDir, if set, is copied into DataDir before the start (CopyDir):
	// a filled store reused by many runs, none of which may change it.
	SeedDir string
	TempDir string   // parent of a fresh DataDir; "" is os.TempDir()
	Env     []string // added to this process's environment
	// CPUs, if not empty, binds the server to these CPUs from its first
	// instruction (cpuset.Start), so its GOMAXPROCS is CPUs.Len(); Start
	// refuses CPUs the machine lacks. Empty: the server is not pinned.
	CPUs cpuset.Set
	// Log also receives the server's stdout and stderr, line by line, after
	// a first line with the command; nil keeps them only in the tail.
	Log          io.Writer
	StartTimeout time.Duration // for the whole start, WAL replay included; 0 is 30s
}

const defaultStartTimeout = 30 * time.Second

// interruptGrace bounds Start's wait for its context to end after
// kvserver died of SIGINT before serving: a Ctrl-C this process also got
// cancels it within that, and a SIGINT from elsewhere does not hold the
// start up for longer.
const interruptGrace = 2 * time.Second

// tailLines is how many of the server's last output lines are kept.
const tailLines = 1000

// servingLine matches kvserver's "serving" log line, or loadtest
// bare-server's "listening on" line, and captures its address.
var servingLine = regexp.MustCompile(`(?:msg=serving .*?\baddr=|listening on http://)(\S+)`)

// Server is one running kvserver process.
type Server struct {
	URL     string // http://127.0.0.1:PORT
	Addr    string // 127.0.0.1:PORT
	PID     int
	DataDir string
	Args    []string   // the whole command line, the binary first
	CPUs    cpuset.Set // the CPUs it is bound to (Options.CPUs); empty if not pinned

	cmd       *exec.Cmd
	ownsData  bool // DataDir was made by Start: remove it once the process ends
	exited    chan struct{}
	waitErr   error // cmd.Wait's result, read after exited is closed
	exitCode  int   // read after exited is closed
	tail      *lineTail
	cleanOnce sync.Once
	cleanErr  error
}

// StartError is why Start failed: the process exited, did not serve in
// time, or could not be started at all.
type StartError struct {
	Reason   string
	ExitCode int    // the process's own exit code; -1 if it did not exit by itself or never ran
	LogTail  string // its last output lines
}

func (e *StartError) Error() string {
	if e.LogTail == "" {
		return "kvserver did not start: " + e.Reason
	}
	return fmt.Sprintf("kvserver did not start: %s; its last output:\n%s", e.Reason, e.LogTail)
}

// Start runs the binary on 127.0.0.1 with a port the kernel picks, reads the
// port back from its "serving" log line, and returns once GET /v0/status
// answers 200. On failure nothing is left running and the error (a
// *StartError once the process ran) carries the server's last output.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.Binary == "" && len(o.Argv) == 0 {
		return nil, errors.New("harness: no kvserver binary given (Options.Binary); build one with make build")
	}
	if !o.CPUs.IsEmpty() {
		if err := o.CPUs.Check(); err != nil {
			return nil, fmt.Errorf("harness: Options.CPUs %s: %w", o.CPUs, err)
		}
	}
	timeout := o.StartTimeout
	if timeout <= 0 {
		timeout = defaultStartTimeout
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	s := &Server{DataDir: o.DataDir, CPUs: o.CPUs, exited: make(chan struct{}), exitCode: -1, tail: newLineTail(tailLines)}
	if s.DataDir == "" && len(o.Argv) == 0 {
		dir, err := os.MkdirTemp(o.TempDir, "kvserver-data-")
		if err != nil {
			return nil, fmt.Errorf("harness: cannot make a data directory: %w; is Options.TempDir writable?", err)
		}
		s.DataDir, s.ownsData = dir, true
	}
	fail := func(err error) (*Server, error) {
		s.removeData()
		return nil, err
	}
	if o.SeedDir != "" {
		if err := CopyDir(o.SeedDir, s.DataDir); err != nil {
			return fail(err)
		}
	}

	argv := append([]string{o.Binary, "-addr", "127.0.0.1:0", "-data", s.DataDir}, o.Args...)
	if len(o.Argv) > 0 {
		argv = o.Argv
	}
	s.Args = argv
	if o.Log != nil {
		if o.CPUs.IsEmpty() {
			fmt.Fprintf(o.Log, "--- %q\n", argv)
		} else {
			fmt.Fprintf(o.Log, "--- %q on CPUs %s\n", argv, o.CPUs)
		}
	}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Env = append(os.Environ(), o.Env...)
	s.cmd.SysProcAttr = dieWithParent()
	// The pipe is ours, not exec's, so reading it to EOF and Wait need not
	// be ordered; stdout and stderr share it, so lines keep their order.
	pr, pw, err := os.Pipe()
	if err != nil {
		return fail(fmt.Errorf("harness: %w", err))
	}
	s.cmd.Stdout, s.cmd.Stderr = pw, pw
	if err := cpuset.Start(s.cmd, o.CPUs); err != nil {
		pr.Close()
		pw.Close()
		reason := fmt.Sprintf("cannot run %s: %v; build it with make build", argv[0], err)
		var pathErr *fs.PathError
		var execErr *exec.Error
		if !errors.As(err, &pathErr) && !errors.As(err, &execErr) {
			reason = err.Error() // binding to Options.CPUs failed, not the exec
		}
		return fail(&StartError{Reason: reason, ExitCode: -1})
	}
	pw.Close()
	s.PID = s.cmd.Process.Pid

	addr := make(chan string, 1)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		s.readLog(pr, o.Log, addr)
	}()
	go func() {
		err := s.cmd.Wait()
		// The whole log is in the tail before anyone looks. This also
		// waits for the pipe to close: a child the server left running
		// with its output would hold Exited open (kvserver starts none).
		<-logDone
		s.waitErr, s.exitCode = err, s.cmd.ProcessState.ExitCode()
		close(s.exited)
	}()

	startErr := func(reason string) *StartError {
		code := -1
		select {
		case <-s.exited:
			code = s.exitCode
		default:
			s.Kill() // reads the rest of the log too
		}
		return &StartError{Reason: reason, ExitCode: code, LogTail: s.LogTail(30)}
	}
	select {
	case a := <-addr:
		s.Addr, s.URL = a, "http://"+a
	case <-s.exited:
		if interruptedBySIGINT(s.cmd.ProcessState) {
			// A terminal's Ctrl-C reached kvserver between its fork and
			// its own process group. It reached this process too, whose
			// context ends once the signal's handler has run: wait for
			// that, so that the caller sees an interrupted start rather
			// than a failed one.
			grace := time.NewTimer(interruptGrace)
			defer grace.Stop()
			select {
			case <-ctx.Done():
			case <-grace.C:
			}
		}
		return fail(startErr(fmt.Sprintf("it exited with code %d before serving", s.exitCode)))
	case <-ctx.Done():
		return fail(startErr(fmt.Sprintf("no %q log line after %v (%v)", "msg=serving addr=...", time.Since(began).Round(time.Millisecond), context.Cause(ctx))))
	}
	if err := pollReady(ctx, s.URL, s.exited); err != nil {
		select {
		case <-s.exited:
			return fail(startErr(fmt.Sprintf("it exited with code %d while starting", s.exitCode)))
		default:
			return fail(startErr(err.Error()))
		}
	}
	return s, nil
}

// readLog copies the server's output line by line to the tail and to w,
// and sends the address of the first "serving" line on addr.
func (s *Server) readLog(r io.ReadCloser, w io.Writer, addr chan<- string) {
	defer r.Close()
	br := bufio.NewReader(r)
	sent := false
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			line = strings.TrimSuffix(line, "\n")
			s.tail.add(line)
			if w != nil {
				fmt.Fprintln(w, line)
			}
			if m := servingLine.FindStringSubmatch(line); m != nil && !sent {
				addr <- m[1]
				sent = true
			}
		}
		if err != nil {
			return
		}
	}
}

// Exited is closed once the process has ended and all its output is read.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// ExitCode is the process's exit code once Exited is closed: -1 if a
// signal ended it. While the process runs it is -1 too.
func (s *Server) ExitCode() int {
	if s.Running() {
		return -1
	}
	return s.exitCode
}

// Running reports whether the process has not ended yet.
func (s *Server) Running() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Signal sends sig to the process; signalling one that has ended is no error.
func (s *Server) Signal(sig os.Signal) error {
	err := s.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// Stop sends SIGTERM and waits up to timeout for the process to exit. It
// returns an error if the exit code is not 0 or the process outlives the
// timeout (it is then killed). An owned data directory is removed after.
func (s *Server) Stop(timeout time.Duration) error {
	if err := s.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("cannot stop kvserver (pid %d): %w", s.PID, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-s.exited:
	case <-timer.C:
		s.Kill()
		return fmt.Errorf("kvserver (pid %d) still running %v after SIGTERM; killed it; its last output:\n%s", s.PID, timeout, s.LogTail(20))
	}
	if err := s.Cleanup(); err != nil {
		return err
	}
	if s.exitCode != 0 {
		return fmt.Errorf("kvserver (pid %d) exited with code %d after SIGTERM, want 0; its last output:\n%s", s.PID, s.exitCode, s.LogTail(20))
	}
	return nil
}

// Kill sends SIGKILL and waits for the process to be gone (a crash, for
// crashtest). An owned data directory is removed after.
func (s *Server) Kill() error {
	if err := s.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("cannot kill kvserver (pid %d): %w", s.PID, err)
	}
	<-s.exited
	return s.Cleanup()
}

// Cleanup kills the process if it still runs and removes the data
// directory if Start made it. Safe to call more than once (defer it).
func (s *Server) Cleanup() error {
	if s.Running() {
		s.Signal(syscall.SIGKILL)
		<-s.exited
	}
	s.cleanOnce.Do(func() { s.cleanErr = s.removeData() })
	return s.cleanErr
}

func (s *Server) removeData() error {
	if !s.ownsData {
		return nil
	}
	if err := os.RemoveAll(s.DataDir); err != nil {
		return fmt.Errorf("cannot remove kvserver data directory: %w", err)
	}
	return nil
}

// LogTail is the last n lines of the server's output, each indented, for
// error messages.
func (s *Server) LogTail(n int) string {
	out := ""
	for _, l := range s.tail.last(n) {
		out += "  " + l + "\n"
	}
	return out
}

// LogLines is the last n lines of the server's output as they were.
func (s *Server) LogLines(n int) []string { return s.tail.last(n) }
