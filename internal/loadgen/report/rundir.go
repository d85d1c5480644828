package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// ResultsRoot is where runs get their folders by default.
const ResultsRoot = "results"

// NewDir is the run's folder, created: dir, or where dir is "" the
// default one (DefaultDir, now), named for the server's pool, the
// workload and the rate. A dir that already holds files is refused
// (NotEmptyError).
func NewDir(dir string, server map[string]string, workload, rate string) (string, error) {
	if dir == "" {
		dir = DefaultDir(time.Now(), server, workload, rate)
	}
	return dir, PrepareDir(dir)
}

// DefaultDir is results/<UTC time>-<pool or "server">-<workload>-<rate>,
// the folder of a run given no -out: a new one per run, never an earlier
// run's (a second run of the same name within the same second gets a
// "-2" suffix, and so on).
func DefaultDir(now time.Time, server map[string]string, workload, rate string) string {
	pool := "server"
	if p := server["pool"]; p != "" {
		pool = p
	}
	name := strings.Join([]string{now.UTC().Format("20060102T150405Z"), pool, workload, rate}, "-")
	dir := filepath.Join(ResultsRoot, slug(name))
	for i := 2; ; i++ {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return dir
		}
		dir = filepath.Join(ResultsRoot, slug(name)+"-"+strconv.Itoa(i))
	}
}

// slug makes s safe as one path element: "mixed:0.9" -> "mixed0.9",
// "get=0.8,put=0.2" -> "get0.8_put0.2".
func slug(s string) string {
	return strings.NewReplacer(":", "", "=", "", ",", "_", "/", "-", " ", "-").Replace(s)
}

// RateName is the rate part of a folder name.
func RateName(rate float64) string {
	if rate <= 0 {
		return "closed"
	}
	return strconv.FormatFloat(rate, 'f', -1, 64)
}

// NotEmptyError is PrepareDir's refusal of a folder that holds files: the
// command line's fault (a new -out, or none, is the fix).
type NotEmptyError struct {
	Dir   string
	Files int
	First string // one of them, to recognise the folder by
}

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("-out %s already holds %d files (%s, ...); give a new or empty directory, or leave -out out for a fresh results/<time>-... folder",
		e.Dir, e.Files, e.First)
}

// PrepareDir creates dir, refusing one that already holds files: a run
// never mixes its files with an earlier run's.
func PrepareDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("cannot read -out %s: %w", dir, err)
	case len(entries) > 0:
		return &NotEmptyError{dir, len(entries), entries[0].Name()}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create -out %s: %w", dir, err)
	}
	return nil
}

// WriteRun writes summary.json and the .hgrm files beside the files the
// run streamed, and says on w where they are.
func WriteRun(w io.Writer, dir string, res *record.Result, server map[string]string) error {
	if res.OutputErr != nil {
		return fmt.Errorf("the run's files in %s are incomplete: %w", dir, res.OutputErr)
	}
	if err := WriteFiles(dir, res, server); err != nil {
		return err
	}
	files := append([]string{SummaryFile, CorrectedFile, UncorrectedFile, record.CorrectedLogFile, record.UncorrectedLogFile},
		record.OpLogFiles(res.Config.Workload)...)
	if res.Config.KeepResults {
		files = append(files, record.ResultsFile)
	}
	fmt.Fprintf(w, "wrote %s/ (%s)\n", dir, strings.Join(files, ", "))
	return nil
}

// ServerText describes the kvserver's settings (harness.ServerConfig) for
// a run's header line.
func ServerText(server map[string]string) string {
	if server == nil {
		return " (not a kvserver: no settings recorded)"
	}
	return fmt.Sprintf(" (kvserver pool=%s workers=%s cap=%s overflow=%s)", server["pool"], server["workers"], server["cap"], server["overflow"])
}

// ElapsedText is d rounded for "interrupted after N s".
func ElapsedText(d time.Duration) string {
	return fmt.Sprintf("%.1f s", d.Seconds())
}
