package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/kvpool/kvpool/internal/harness"
)

// session is one run against one data directory: the kvserver started on
// it (restarted after each kill) and its accumulated log.
type session struct {
	cfg     config
	out     io.Writer
	dataDir string
	logPath string
	logf    *os.File
	rng     *rand.Rand
	srv     *harness.Server
}

func newSession(cfg config, name string, out io.Writer) (*session, error) {
	dir, err := os.MkdirTemp(cfg.dir, "crashtest-"+name+"-")
	if err != nil {
		return nil, err
	}
	s := &session{
		cfg: cfg, out: out, dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "kvserver.log"),
		rng: rand.New(rand.NewPCG(cfg.seed, 0)),
	}
	if s.logf, err = os.Create(s.logPath); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// args are kvserver's flags besides address and data directory, which
// the harness sets. The read timeout outlasts the shutdown timeout, so
// that a drain that waited for silent connections would fail rather than
// pass slowly.
func (s *session) args() []string {
	return []string{"-cache-mb", "16", "-pool", s.cfg.pool, fmt.Sprintf("-sync=%t", s.cfg.sync), "-read-timeout", "30s", "-shutdown-timeout", "10s"}
}

// start (re)starts the kvserver on the session's directory.
func (s *session) start(ctx context.Context) error {
	srv, err := harness.Start(ctx, harness.Options{Binary: s.cfg.kvserver, DataDir: s.dataDir, Args: s.args(), Log: s.logf})
	if err != nil {
		return err
	}
	s.srv = srv
	return nil
}

// runFor is the next random moment at which to kill or stop the server.
func (s *session) runFor() time.Duration {
	return s.cfg.minRun + time.Duration(s.rng.Int64N(int64(s.cfg.maxRun-s.cfg.minRun)+1))
}

// close kills the server if it still runs and removes the directory,
// unless the run failed or -keep was given: then it says where it is.
func (s *session) close(passed bool) {
	if s.srv != nil {
		s.srv.Kill()
	}
	s.logf.Close()
	dir := filepath.Dir(s.dataDir)
	if passed && !s.cfg.keep {
		os.RemoveAll(dir)
		return
	}
	fmt.Fprintf(s.out, "kept: data %s, kvserver log %s\n", s.dataDir, s.logPath)
}
