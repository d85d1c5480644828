package readme

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sweep entry says how the test runs one command of README.md.
//
// The command runs as written, in a fresh copy of the repository, with
// what `run` changes: the server's address where the README names
// 127.0.0.1:19234 (the test's kvserver listens on a free port), the run
// folders the README writes as results/<run> and
// results/compare-<time>-queues, and make variables or flags appended
// that make a long command short (a later make variable wins). The
// program and subcommand must stay those of the README command.
type sweep struct {
	readme string // the command exactly as README.md shows it
	// run is what the test runs: {URL}, {ADDR}, {TMP}, {RUN} and
	// {COMPARE} are replaced (see vars); "" runs readme as written.
	run string
	// env is added to the command's environment.
	env []string
	// server: the command serves until stopped (make run); the test waits
	// for its "serving" line, keeps it for check, then stops it with
	// SIGINT and expects a clean stop.
	server bool
	// interruptOn, if set, is a line of the command's output after which
	// the test stops it with SIGINT, as Ctrl-C does: a long command run
	// as written, up to where it has shown what it does.
	interruptOn *regexp.Regexp
	// codes are the exit codes that mean the command worked (nil: 0).
	codes []int
	// skip, if set, says why the command is not run here.
	skip string
	// check looks at what the command did; out is its output.
	check func(t *testing.T, s *session, out string)
}

// sweeps are README.md's commands, in the order the test runs them:
// the server first, then everything that uses it.
var sweeps = []sweep{
	{readme: "make run", run: "make run ADDR=127.0.0.1:0 DATA={TMP}/data", server: true},
	{readme: "make test", skip: "it is the command that runs this test"},
	{readme: "curl -X PUT --data-binary 'hello' 'http://127.0.0.1:19234/v0/entity?id=greeting'",
		run: "curl -sS --fail -X PUT --data-binary 'hello' 'http://{ADDR}/v0/entity?id=greeting'"},
	{readme: "curl 'http://127.0.0.1:19234/v0/entity?id=greeting'", run: "curl -sS 'http://{ADDR}/v0/entity?id=greeting'",
		check: func(t *testing.T, _ *session, out string) { assert.Equal(t, "hello", out) }},
	{readme: "curl -X DELETE 'http://127.0.0.1:19234/v0/entity?id=greeting'",
		run: "curl -sS --fail -X DELETE 'http://{ADDR}/v0/entity?id=greeting'"},
	{readme: "curl -i 'http://127.0.0.1:19234/v0/entity?id=greeting'", run: "curl -sS -i 'http://{ADDR}/v0/entity?id=greeting'",
		check: func(t *testing.T, _ *session, out string) { assert.Contains(t, out, "HTTP/1.1 404") }},
	{readme: "curl 'http://127.0.0.1:19234/v0/status'", run: "curl -sS 'http://{ADDR}/v0/status'",
		check: func(t *testing.T, _ *session, out string) { assert.Equal(t, "OK", out) }},
	{readme: "make run POOL=direct", run: "make run POOL=direct ADDR=127.0.0.1:0 DATA={TMP}/data-direct", server: true,
		check: func(t *testing.T, _ *session, out string) { assert.Contains(t, out, "pool=direct") }},
	{readme: "make run POOL=lifo", run: "make run POOL=lifo ADDR=127.0.0.1:0 DATA={TMP}/data-lifo", server: true,
		check: func(t *testing.T, _ *session, out string) { assert.Contains(t, out, "pool=lifo") }},
	{readme: "make run POOL=fifo ARGS='-workers 8 -io-delay 1ms'", run: "make run POOL=fifo ARGS='-workers 8 -io-delay 1ms' ADDR=127.0.0.1:0 DATA={TMP}/data-fifo", server: true,
		check: func(t *testing.T, _ *session, out string) {
			assert.Regexp(t, `pool=fifo .*workers=8 `, out)
			assert.Contains(t, out, "io_delay=1ms")
		}},
	{readme: "make run ARGS='-io-delay 1ms -io-concurrency 16'",
		run: "make run ARGS='-io-delay 1ms -io-concurrency 16' ADDR=127.0.0.1:0 DATA={TMP}/data-slow", server: true,
		check: func(t *testing.T, _ *session, out string) {
			assert.Regexp(t, `pool=auto .*max_wait=auto .*limit=vegas `, out, "the default, nothing sized by hand")
			assert.Contains(t, out, "io_concurrency=16")
		}},
	{readme: "make fill KEYS=100000", run: "make fill KEYS=100000 KEYS=2000 TARGET={URL}",
		check: func(t *testing.T, s *session, out string) {
			assert.Contains(t, out, "ids 1..2000")
			assert.Equal(t, "200", s.status(t, "/v0/entity?id=2000"), "the last id filled reads back")
		}},
	{readme: "make attack RATE=5000 DURATION=30s KEYS=100000", run: "make attack RATE=5000 DURATION=30s KEYS=100000 RATE=500 DURATION=1s KEYS=2000 TARGET={URL}",
		check: func(t *testing.T, s *session, out string) {
			s.vars["{RUN}"] = s.newest(t, "results/*-get-500")
			assert.FileExists(t, filepath.Join(s.dir, s.vars["{RUN}"], "summary.json"))
			assert.Contains(t, out, "Latency Distribution")
		}},
	{readme: "LOADTEST_SPIKE=2x:10s@10s LOADTEST_CLIENTS=backoff make attack RATE=5000 DURATION=50s KEYS=100000",
		run: "LOADTEST_SPIKE=2x:300ms@300ms LOADTEST_CLIENTS=backoff make attack RATE=5000 DURATION=50s KEYS=100000 RATE=500 DURATION=1s KEYS=2000 TARGET={URL}",
		check: func(t *testing.T, _ *session, out string) {
			assert.Contains(t, out, "spike to 1000 req/s (2x) from 300ms for 300ms")
			assert.Contains(t, out, "Clients:      timeout 1s, 2 retries")
			assert.Contains(t, out, "useful answers")
		}},
	{readme: "make saturate KEYS=100000", run: "make saturate KEYS=100000 KEYS=2000 TARGET={URL}",
		env:   []string{"LOADTEST_START_RATE=500", "LOADTEST_MAX_RATE=2000", "LOADTEST_STEP=300ms", "LOADTEST_VALIDATE=500ms", "LOADTEST_COOLDOWN=0s"},
		codes: []int{0, 3, 4}, // a validation that failed or a loader-bound search on a busy CI machine still ran as documented
		check: func(t *testing.T, _ *session, out string) { assert.Contains(t, out, "saturation") }},
	{readme: "KEYS=100000 loadtest/vegeta-get.sh 5000 30s", run: "KEYS=100000 KEYS=2000 TARGET={URL} OUT={TMP}/vegeta loadtest/vegeta-get.sh 500 1s",
		check: func(t *testing.T, s *session, out string) {
			total, codes := vegetaCounts(t, out)
			assert.Greater(t, total, 0)
			assert.Equal(t, map[string]int{"200": total}, codes, "ids 1..2000 were filled: every request read one")
			assert.FileExists(t, filepath.Join(s.vars["{TMP}"], "vegeta", "results.bin"))
		}},
	{readme: "go tool vegeta report results/<run>/results.bin", run: "go tool vegeta report {RUN}/results.bin",
		check: func(t *testing.T, _ *session, out string) {
			assert.Regexp(t, `Requests +\[total, rate, throughput\] +500,`, out, "make attack's 500 requests")
			assert.Regexp(t, `Status Codes +\[code:count\] +200:500`, out)
		}},
	{readme: "go tool vegeta plot results/<run>/results.bin > plot.html", run: "go tool vegeta plot {RUN}/results.bin > plot.html",
		check: func(t *testing.T, s *session, _ string) {
			b, err := os.ReadFile(filepath.Join(s.dir, "plot.html"))
			require.NoError(t, err)
			assert.Contains(t, string(b), "<html")
			assert.Contains(t, string(b), "dygraph", "vegeta's plot draws with dygraphs")
		}},
	{readme: "make compare QUICK=1", run: "make compare QUICK=1 POOLS=lifo COMPARE_ARGS='-keys 1000 -workload get -rate 3000 -quiet-wait 0s'",
		codes: compareCodes,
		check: func(t *testing.T, s *session, out string) {
			compareRan(t, out)
			s.vars["{COMPARE}"] = s.newest(t, "results/compare-*-queues")
			assert.FileExists(t, filepath.Join(s.dir, s.vars["{COMPARE}"], "REPORT.md"))
		}},
	// The full preset as written, stopped once it has planned its runs
	// and begun filling the store: the quick one above ran every step.
	{readme: "make compare", interruptOn: regexp.MustCompile(`filling a store`),
		check: func(t *testing.T, s *session, out string) {
			assert.Contains(t, out, "compare queues: 8 variants × 3 workloads", "the full preset: every pool and the peer, GET, PUT and mixed")
			assert.Contains(t, out, "loadtest compare: interrupted; the report of what finished is in ")
			assert.FileExists(t, filepath.Join(s.dir, s.newest(t, "results/compare-*-queues"), "REPORT.md"))
		}},
	{readme: "./bin/loadtest compare -render results/compare-<time>-queues", run: "./bin/loadtest compare -render {COMPARE}",
		check: func(t *testing.T, s *session, _ string) {
			b, err := os.ReadFile(filepath.Join(s.dir, s.vars["{COMPARE}"], "REPORT.md"))
			require.NoError(t, err)
			assert.Contains(t, string(b), "lifo")
		}},
	{readme: "go tool pprof -top 'http://127.0.0.1:19234/debug/pprof/profile?seconds=10'", run: "go tool pprof -top 'http://{ADDR}/debug/pprof/profile?seconds=1'",
		check: func(t *testing.T, _ *session, out string) { assert.Contains(t, out, "flat%") }},
	{readme: "make pprof-diff RUN=results/compare-<time>-queues A=direct B=lifo", run: "make pprof-diff RUN={COMPARE} A=direct B=lifo",
		check: func(t *testing.T, _ *session, out string) { assert.Contains(t, out, "flat%") }},
	{readme: "make bench-floor", run: "make bench-floor FLOOR_ARGS='-rounds 1 -round 200ms -warmup 0s -keys 1000 -states fresh'",
		check: func(t *testing.T, _ *session, out string) {
			assert.Contains(t, out, "kvserver/bare CPU per request")
			assert.Contains(t, out, "loader CPU share")
		}},
}

// compareCodes: a comparison exits 1 also when an overload step failed
// its checks, a verdict on what was measured, which a busy CI machine may
// earn (make then exits 2); compareRan tells that apart from a
// comparison that could not run.
var compareCodes = []int{0, 2}

// compareRan checks that a comparison ran to its report: no step FAILED,
// and a failed exit only for an overload verdict.
func compareRan(t *testing.T, out string) {
	t.Helper()
	assert.NotContains(t, out, "FAILED", "no step failed")
	assert.Contains(t, out, "report: ")
	if strings.Contains(out, "make: *** [") {
		assert.Contains(t, out, "loadtest compare: failed the overload checks", "the only failure a working comparison may end in")
	}
}

// vegetaCounts reads `vegeta report`'s request total and status codes.
// vegeta's own attacker may send a few requests fewer than rate ×
// duration on a loaded machine; loadtest sends every one it planned.
func vegetaCounts(t *testing.T, out string) (int, map[string]int) {
	t.Helper()
	m := regexp.MustCompile(`Requests +\[total, rate, throughput\] +(\d+),`).FindStringSubmatch(out)
	require.NotNil(t, m, "no request total in %s", out)
	total, _ := strconv.Atoi(m[1])
	c := regexp.MustCompile(`Status Codes +\[code:count\] +(.*)`).FindStringSubmatch(out)
	require.NotNil(t, c, "no status codes in %s", out)
	codes := map[string]int{}
	for _, f := range strings.Fields(c[1]) {
		code, n, _ := strings.Cut(f, ":")
		codes[code], _ = strconv.Atoi(n)
	}
	return total, codes
}

// commandTimeout bounds each command; the longest, a comparison with
// short steps, takes about a minute.
const commandTimeout = 5 * time.Minute

// TestREADMECommands runs every command README.md shows, as its sweep
// entry says, on a fresh copy of the repository (its tracked files and
// those git does not ignore: what a clone of this tree would hold). A
// README command without an entry fails, and so does an entry whose
// command the README no longer shows.
func TestREADMECommands(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	var shown []string
	for _, c := range Commands(md) {
		shown = append(shown, c.Text)
		assert.True(t, slices.ContainsFunc(sweeps, func(s sweep) bool { return s.readme == c.Text }),
			"README.md:%d shows %q, which this test does not run: add it to sweeps", c.Line, c.Text)
	}
	for _, s := range sweeps {
		assert.Contains(t, shown, s.readme, "a sweep entry for a command README.md no longer shows")
		if s.run != "" {
			assert.Equal(t, program(s.readme), program(s.run), "the test runs another program than README.md shows")
		}
	}
	if t.Failed() {
		return
	}

	s := &session{dir: freshCopy(t, root), vars: map[string]string{"{TMP}": t.TempDir()}}
	var main *server
	defer func() {
		if main != nil {
			main.stop(t)
		}
	}()
	for _, sw := range sweeps {
		if !t.Run(sw.readme, func(t *testing.T) {
			if sw.skip != "" {
				t.Skip(sw.skip)
			}
			cmd := s.expand(sw)
			if sw.interruptOn != nil {
				srv := s.startUntil(t, cmd, sw.env, sw.interruptOn)
				srv.interrupt(t)
				sw.check(t, s, srv.output())
				return
			}
			if sw.server {
				srv := s.start(t, cmd, sw.env)
				if main == nil { // the first server serves every later command
					main = srv
					s.vars["{URL}"], s.vars["{ADDR}"] = "http://"+srv.addr, srv.addr
				} else {
					defer srv.stop(t)
				}
				if sw.check != nil {
					sw.check(t, s, srv.output())
				}
				return
			}
			out, code := s.shell(t, cmd, sw.env)
			codes := sw.codes
			if codes == nil {
				codes = []int{0}
			}
			require.Contains(t, codes, code, "%s\nexited %d:\n%s", cmd, code, out)
			if sw.check != nil {
				sw.check(t, s, out)
			}
		}) {
			return // later commands need what this one should have made
		}
	}
}

// program is a command's program and its subcommands: the first word
// after any environment assignments and the plain words that follow it
// (KEYS=1 make fill KEYS=2 -> "make fill"; go tool vegeta report x ->
// "go tool vegeta report"; curl -X PUT ... -> "curl").
func program(cmd string) string {
	words := strings.Fields(cmd)
	for len(words) > 0 && envAssignment.MatchString(words[0]) {
		words = words[1:]
	}
	n := min(1, len(words))
	for n < len(words) && subcommand.MatchString(words[n]) {
		n++
	}
	return strings.Join(words[:n], " ")
}

var (
	envAssignment = regexp.MustCompile(`^[A-Z_]+=`)
	subcommand    = regexp.MustCompile(`^[a-z][a-z-]*$`)
)

// session is the fresh copy the commands run in and what they made.
type session struct {
	dir  string
	vars map[string]string
}

// expand is sw's command with the session's values in place.
func (s *session) expand(sw sweep) string {
	cmd := sw.run
	if cmd == "" {
		cmd = sw.readme
	}
	for k, v := range s.vars {
		cmd = strings.ReplaceAll(cmd, k, v)
	}
	return cmd
}

// shell runs cmd with bash in the copy and returns its output and exit
// code; a command still running after commandTimeout is killed, with
// its process group.
func (s *session) shell(t *testing.T, cmd string, env []string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	c := s.command(cmd, env)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	require.NoError(t, c.Start())
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("%s did not end within %v:\n%s", cmd, commandTimeout, out.String())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	}
	t.Fatalf("%s: %v", cmd, err)
	return "", -1
}

func (s *session) command(cmd string, env []string) *exec.Cmd {
	c := exec.Command("bash", "-c", cmd)
	c.Dir = s.dir
	c.Env = append(os.Environ(), env...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return c
}

// newest is the newest folder of the copy that pattern matches, relative
// to the copy.
func (s *session) newest(t *testing.T, pattern string) string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(s.dir, pattern))
	require.NoError(t, err)
	require.NotEmpty(t, dirs, "no folder %s was written", pattern)
	slices.Sort(dirs) // names begin with a UTC time
	rel, err := filepath.Rel(s.dir, dirs[len(dirs)-1])
	require.NoError(t, err)
	return rel
}

// status is the HTTP status of GET path on the session's server.
func (s *session) status(t *testing.T, path string) string {
	t.Helper()
	out, code := s.shell(t, "curl -sS -o /dev/null -w '%{http_code}' '"+s.vars["{URL}"]+path+"'", nil)
	require.Equal(t, 0, code, out)
	return out
}

// server is a command that runs until stopped.
type server struct {
	cmd  *exec.Cmd
	addr string // kvserver's, from its "serving" line
	seen string // the line startUntil waited for
	done chan error
	mu   sync.Mutex
	out  bytes.Buffer
}

var servingLine = regexp.MustCompile(`msg=serving .*?\baddr=(\S+)`)

// start runs cmd and waits for kvserver's "serving" line.
func (s *session) start(t *testing.T, cmd string, env []string) *server {
	t.Helper()
	srv := s.startUntil(t, cmd, env, servingLine)
	srv.addr = servingLine.FindStringSubmatch(srv.seen)[1]
	return srv
}

// startUntil runs cmd and waits for a line of its output that line
// matches (kept in seen).
func (s *session) startUntil(t *testing.T, cmd string, env []string, line *regexp.Regexp) *server {
	t.Helper()
	srv := &server{cmd: s.command(cmd, env), done: make(chan error, 1)}
	pr, pw := io.Pipe()
	srv.cmd.Stdout, srv.cmd.Stderr = pw, pw
	require.NoError(t, srv.cmd.Start())
	seen := make(chan string, 1)
	scanned := make(chan struct{}) // closed once every line is in srv.out
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			srv.mu.Lock()
			srv.out.WriteString(sc.Text() + "\n")
			srv.mu.Unlock()
			if line.MatchString(sc.Text()) {
				select {
				case seen <- sc.Text():
				default:
				}
			}
		}
		io.Copy(io.Discard, pr) // past a line too long to scan: keep the command unblocked
	}()
	go func() {
		err := srv.cmd.Wait()
		pw.Close()
		// Wait has handed the last bytes to the pipe, not yet to srv.out:
		// whoever reads the output once done has fired must find them.
		<-scanned
		srv.done <- err
	}()
	timeout := time.NewTimer(commandTimeout)
	defer timeout.Stop()
	select {
	case srv.seen = <-seen:
		return srv
	case err := <-srv.done:
		t.Fatalf("%s exited before it printed a line matching %s (%v):\n%s", cmd, line, err, srv.output())
	case <-timeout.C:
		syscall.Kill(-srv.cmd.Process.Pid, syscall.SIGKILL)
		<-srv.done
		t.Fatalf("%s printed no line matching %s within %v:\n%s", cmd, line, commandTimeout, srv.output())
	}
	return nil
}

func (srv *server) output() string {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.out.String()
}

// stop interrupts the server and expects kvserver to stop cleanly.
func (srv *server) stop(t *testing.T) {
	t.Helper()
	srv.interrupt(t)
	assert.Contains(t, srv.output(), "stopped cleanly", "kvserver's log")
}

// interrupt sends SIGINT to the command's process group (make and its
// child), as Ctrl-C in its terminal does, and waits for it to end. Not
// SIGTERM: make passes a SIGTERM on to its child, which would then get
// two, and a second signal stops kvserver without draining.
func (srv *server) interrupt(t *testing.T) {
	t.Helper()
	require.NoError(t, syscall.Kill(-srv.cmd.Process.Pid, syscall.SIGINT))
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	select {
	case <-srv.done:
	case <-timeout.C:
		syscall.Kill(-srv.cmd.Process.Pid, syscall.SIGKILL)
		<-srv.done
		t.Fatalf("the command did not stop within a minute of SIGINT:\n%s", srv.output())
	}
}

// freshCopy copies what a clone of root's tree would hold (tracked
// files, and new ones git does not ignore) into a temporary folder, so
// that nothing built or installed in root helps a command along.
func freshCopy(t *testing.T, root string) string {
	t.Helper()
	list, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	require.NoError(t, err, "git ls-files in %s: the test copies what a clone would hold", root)
	dst := t.TempDir()
	for _, rel := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		src := filepath.Join(root, rel)
		info, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet in the index
		}
		require.NoError(t, err)
		if !info.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		to := filepath.Join(dst, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
		require.NoError(t, os.WriteFile(to, b, info.Mode().Perm()))
	}
	return dst
}
