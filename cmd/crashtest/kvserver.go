package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"time"
)

// kvserver is one run of the kvserver binary. It is started on 127.0.0.1
// with a port the kernel picks, read back from its "serving" log line.
type kvserver struct {
	cmd    *exec.Cmd
	addr   string        // host:port it serves on
	exited chan struct{} // closed once the process has exited and its log is read
	err    error         // Wait's result; read after exited is closed
	log    []string      // its stderr, line by line; read after exited is closed
}

// servingLine matches kvserver's "serving" log line and captures its address.
var servingLine = regexp.MustCompile(`msg=serving addr=(\S+)`)

// startTimeout bounds how long a start may take, WAL replay included.
const startTimeout = 30 * time.Second

// startServer runs bin on dataDir and waits until it answers /v0/status.
// Its stderr is copied to logw as it comes.
func startServer(bin, dataDir string, args []string, logw io.Writer) (*kvserver, error) {
	argv := append([]string{"-addr", "127.0.0.1:0", "-data", dataDir, "-cache-mb", "16"}, args...)
	fmt.Fprintf(logw, "--- %s %q\n", bin, argv)
	cmd := exec.Command(bin, argv...)
	cmd.SysProcAttr = dieWithParent()
	// The pipe is ours, not exec's, so reading it to EOF and Wait do not
	// have to be ordered.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("cannot start %s: %w; build it with make build", bin, err)
	}
	pw.Close()

	s := &kvserver{cmd: cmd, exited: make(chan struct{})}
	addr := make(chan string, 1)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logw, line)
			s.log = append(s.log, line)
			if m := servingLine.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		pr.Close()
	}()
	go func() {
		s.err = cmd.Wait()
		<-logDone
		close(s.exited)
	}()

	select {
	case s.addr = <-addr:
	case <-s.exited:
		return nil, fmt.Errorf("kvserver exited before serving (%v); its log:\n%s", s.err, tail(s.log))
	case <-time.After(startTimeout):
		s.kill()
		return nil, fmt.Errorf("kvserver not serving after %v; its log:\n%s", startTimeout, tail(s.log))
	}
	if err := s.waitReady(); err != nil {
		s.kill()
		return nil, err
	}
	return s, nil
}

func (s *kvserver) base() string { return "http://" + s.addr }

// waitReady polls /v0/status until it answers 200.
func (s *kvserver) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.base()+"/v0/status", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kvserver on %s: /v0/status not 200 after %v (last error %v)", s.addr, startTimeout, err)
		case <-s.exited:
			return fmt.Errorf("kvserver exited while starting (%v); its log:\n%s", s.err, tail(s.log))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *kvserver) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL) // fails only if it already exited
	<-s.exited
}

// terminate sends SIGTERM and waits up to wait for the process to exit,
// returning its exit code; on timeout it kills it and says so.
func (s *kvserver) terminate(wait time.Duration) (int, error) {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return -1, err
	}
	return s.waitExit(wait)
}

// waitExit waits up to wait for the process to exit and returns its exit
// code; on timeout it kills it and says so.
func (s *kvserver) waitExit(wait time.Duration) (int, error) {
	select {
	case <-s.exited:
	case <-time.After(wait):
		s.kill()
		return -1, fmt.Errorf("kvserver still running %v after SIGTERM; killed it", wait)
	}
	var exit *exec.ExitError
	if s.err != nil && !errors.As(s.err, &exit) {
		return -1, s.err
	}
	return s.cmd.ProcessState.ExitCode(), nil
}

// tail is the last lines of a log, for error messages.
func tail(lines []string) string {
	const n = 20
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := ""
	for _, l := range lines {
		out += "  " + l + "\n"
	}
	return out
}
