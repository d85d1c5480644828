package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/harness"
)

// resultsRoot is where runs get their folders by default.
const resultsRoot = "results"

// defaultOutDir is results/<UTC time>-<pool or "server">-<workload>-<rate>,
// the folder of a run given no -out: a new one per run, never an earlier
// run's (a second run of the same name within the same second gets a
// "-2" suffix, and so on).
func defaultOutDir(now time.Time, server map[string]string, workload, rate string) string {
	pool := "server"
	if p := server["pool"]; p != "" {
		pool = p
	}
	name := strings.Join([]string{now.UTC().Format("20060102T150405Z"), pool, workload, rate}, "-")
	dir := filepath.Join(resultsRoot, slug(name))
	for i := 2; ; i++ {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return dir
		}
		dir = filepath.Join(resultsRoot, slug(name)+"-"+strconv.Itoa(i))
	}
}

// slug makes s safe as one path element: "mixed:0.9" -> "mixed0.9",
// "get=0.8,put=0.2" -> "get0.8_put0.2".
func slug(s string) string {
	return strings.NewReplacer(":", "", "=", "", ",", "_", "/", "-", " ", "-").Replace(s)
}

// rateName is the rate part of a folder name.
func rateName(rate float64) string {
	if rate <= 0 {
		return "closed"
	}
	return strconv.FormatFloat(rate, 'f', -1, 64)
}

// prepareOutDir creates dir, refusing one that already holds files: a run
// never mixes its files with an earlier run's.
func prepareOutDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("cannot read -out %s: %w", dir, err)
	case len(entries) > 0:
		return usageError(fmt.Errorf("-out %s already holds %d files (%s, ...); give a new or empty directory, or leave -out out for a fresh results/<time>-... folder",
			dir, len(entries), entries[0].Name()))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create -out %s: %w", dir, err)
	}
	return nil
}

// serverConfig reads the labels of kvserver_config_info from target's
// /metrics. It returns nil when the target is not a kvserver (no such
// page or no such metric): the run goes on without them.
func serverConfig(ctx context.Context, target string) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(target, "/")+"/metrics", nil)
	if err != nil {
		return nil
	}
	// One request on a connection closed after it: no idle keep-alive
	// connection is left to the server (which would hold up its shutdown,
	// or be answered 408 by kvserver's read timeout).
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	labels, _ := harness.ReadConfigInfo(resp.Body)
	return labels
}
