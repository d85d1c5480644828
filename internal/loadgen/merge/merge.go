// Package merge combines runs made at the same time from several loader
// machines against one server (vegeta's distributed recipe, done exactly):
// the histograms and interval logs are merged with HdrHistogram's Merge,
// never by averaging percentiles; rates, counts and status codes are
// summed; results.bin files are concatenated.
package merge

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/report"
)

// run is one loader's folder.
type run struct {
	dir string
	sum report.Summary
}

// Merged is what Runs produced: the combined Result (for report.Print),
// the server settings the runs recorded, and, for the shards of one
// schedule, which they were.
type Merged struct {
	*record.Result
	Server map[string]string
	Shards *Shards
}

// Print writes the merged run's wrk2-style table and, for shards, which
// were merged, with a warning when some of the schedule is missing.
func (m *Merged) Print(w io.Writer) {
	report.Print(w, m.Result)
	if m.Shards != nil {
		fmt.Fprintf(w, "Merged %s\n", m.Shards)
		if len(m.Shards.Missing) > 0 {
			fmt.Fprintf(w, "\n*** WARNING: shards %s of %d are missing: this is not the whole schedule's load ***\n", intList(m.Shards.Missing), m.Shards.N)
		}
	}
}

// Shards is which shards of one schedule (-shard K/N -start-at) a merge
// combined.
type Shards struct {
	N         int
	WholeRate float64
	StartAt   time.Time
	Have      []int // the shards merged, ascending
	Missing   []int // the shards of 1..N not among them
}

// String is "shards 1-4 of 4 of a 40000 req/s schedule starting …: the
// whole schedule", or names the missing ones.
func (s *Shards) String() string {
	head := fmt.Sprintf("shards %s of %d of a %.0f req/s schedule starting %s", intList(s.Have), s.N, s.WholeRate, s.StartAt.UTC().Format(time.RFC3339Nano))
	if len(s.Missing) == 0 {
		return head + ": the whole schedule"
	}
	return fmt.Sprintf("%s: shards %s missing, %.0f%% of the schedule merged", head, intList(s.Missing), 100*float64(len(s.Have))/float64(s.N))
}

// intList joins ks as "1, 3, 4".
func intList(ks []int) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = strconv.Itoa(k)
	}
	return strings.Join(parts, ", ")
}

// Runs merges the runs in dirs into out (created; it must not hold files
// yet): summary.json, the .hgrm files, both interval logs and results.bin
// (if every run has one). Runs with different workloads, interval lengths
// or durations, or that did not overlap in time, are refused, saying what
// differs.
func Runs(dirs []string, out string) (*Merged, error) {
	if len(dirs) < 2 {
		return nil, fmt.Errorf("merge needs at least two run folders, got %d", len(dirs))
	}
	runs := make([]run, len(dirs))
	for i, d := range dirs {
		s, err := report.ReadSummary(d)
		if err != nil {
			return nil, err
		}
		runs[i] = run{d, s}
	}
	if err := compatible(runs); err != nil {
		return nil, err
	}
	shards, err := shardsOf(runs)
	if err != nil {
		return nil, err
	}
	res, err := combine(runs)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create -out %s: %w", out, err)
	}
	series, err := mergeLogs(runs, out, res)
	if err != nil {
		return nil, err
	}
	res.Intervals = series
	if err := concatResults(runs, filepath.Join(out, record.ResultsFile)); err != nil {
		return nil, err
	}
	res.Config.KeepResults = hasResults(runs)
	if shards != nil {
		res.Config.StartAt = shards.StartAt
	}
	m := &Merged{Result: res, Server: runs[0].sum.Server, Shards: shards}
	for _, r := range runs[1:] {
		if !maps.Equal(r.sum.Server, m.Server) {
			m.Server = nil // different servers: record none rather than one
		}
	}
	if err := report.WriteFiles(out, res, m.Server); err != nil {
		return nil, err
	}
	return m, nil
}

// compatible refuses runs that do not describe one load on one server.
func compatible(runs []run) error {
	a := runs[0]
	for _, b := range runs[1:] {
		diff := func(what string, x, y any) error {
			return fmt.Errorf("cannot merge: %s has %s %v, %s has %v; merge runs of one load made at the same time", a.dir, what, x, b.dir, y)
		}
		switch {
		case a.sum.Workload != b.sum.Workload:
			return diff("workload", a.sum.Workload, b.sum.Workload)
		case a.sum.Keys != b.sum.Keys:
			return diff("-keys", a.sum.Keys, b.sum.Keys)
		case a.sum.Dist != b.sum.Dist:
			return diff("-dist", a.sum.Dist, b.sum.Dist)
		case a.sum.ValueSize != b.sum.ValueSize:
			return diff("-value-size", a.sum.ValueSize, b.sum.ValueSize)
		case a.sum.IntervalS != b.sum.IntervalS:
			return diff("-interval", a.sum.IntervalS, b.sum.IntervalS)
		case (a.sum.AskedRate == 0) != (b.sum.AskedRate == 0):
			return diff("-rate", a.sum.AskedRate, b.sum.AskedRate)
		}
		aStart, bStart := a.sum.StartedAt, b.sum.StartedAt
		aEnd := aStart.Add(report.Seconds(a.sum.DurationS))
		bEnd := bStart.Add(report.Seconds(b.sum.DurationS))
		overlap := aStart.Before(bEnd) && bStart.Before(aEnd)
		switch {
		case !overlap:
			return fmt.Errorf("cannot merge: %s (%s to %s) and %s (%s to %s) did not run at the same time",
				a.dir, aStart.Format(time.TimeOnly), aEnd.Format(time.TimeOnly), b.dir, bStart.Format(time.TimeOnly), bEnd.Format(time.TimeOnly))
		case a.sum.DurationS != b.sum.DurationS:
			return diff("-duration", report.Seconds(a.sum.DurationS), report.Seconds(b.sum.DurationS))
		}
	}
	return nil
}

// shardsOf checks that runs recorded as shards (-shard K/N) are shards of
// one schedule: every run a shard, of the same N, the same whole rate and
// the same start instant, no K twice. It returns which shards they are
// (nil if none is a shard); shards missing from 1..N are not an error
// (a loader host may have failed): Shards names them.
func shardsOf(runs []run) (*Shards, error) {
	i := slices.IndexFunc(runs, func(r run) bool { return r.sum.Shard != nil })
	if i < 0 {
		return nil, nil
	}
	first := &runs[i]
	a := first.sum
	out := &Shards{N: a.Shard.N, WholeRate: a.WholeRate}
	if a.StartAt != nil {
		out.StartAt = *a.StartAt
	}
	byK := map[int]string{}
	for _, r := range runs {
		b := r.sum
		differ := func(what string, x, y any) error {
			return fmt.Errorf("cannot merge: %s has %s %v, %s has %v; shards of one schedule agree on -shard's N, -rate and -start-at", first.dir, what, x, r.dir, y)
		}
		switch {
		case b.Shard == nil:
			return nil, fmt.Errorf("cannot merge: %s is shard %s of a schedule, %s is no shard; merge the shards of one schedule, or runs of their own", first.dir, a.Shard, r.dir)
		case b.Shard.N != a.Shard.N:
			return nil, differ("-shard", a.Shard, b.Shard)
		case b.WholeRate != a.WholeRate:
			return nil, differ("-rate", a.WholeRate, b.WholeRate)
		case (b.StartAt == nil) != (a.StartAt == nil) || b.StartAt != nil && !b.StartAt.Equal(*a.StartAt):
			return nil, differ("-start-at", timeText(a.StartAt), timeText(b.StartAt))
		}
		if dir, dup := byK[b.Shard.K]; dup {
			return nil, fmt.Errorf("cannot merge: %s and %s are both shard %s; each shard of a schedule once", dir, r.dir, b.Shard)
		}
		byK[b.Shard.K] = r.dir
	}
	for k := 1; k <= out.N; k++ {
		if _, ok := byK[k]; ok {
			out.Have = append(out.Have, k)
		} else {
			out.Missing = append(out.Missing, k)
		}
	}
	return out, nil
}

func timeText(t *time.Time) string {
	if t == nil {
		return "none"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// combine is the runs' Results merged (record.Merge), each read from its
// summary.json (report.ResultOf), and whether and why a run was unpinned.
func combine(runs []run) (*record.Result, error) {
	rs := make([]*record.Result, len(runs))
	for i, r := range runs {
		var err error
		if rs[i], err = report.ResultOf(r.sum); err != nil {
			return nil, fmt.Errorf("%s: %w", r.dir, err)
		}
	}
	res := record.Merge(rs)
	res.Config.Name = "merge"
	for i, r := range runs {
		switch s := rs[i]; {
		case s.Unpinned == "" || res.Unpinned != "" && res.Unpinned != "no -cpus":
		case s.Unpinned == "no -cpus":
			res.Unpinned = s.Unpinned
		default:
			res.Unpinned = fmt.Sprintf("%s (%s)", s.Unpinned, r.dir)
		}
	}
	return res, nil
}

// mergeLogs merges interval i of every run's logs into interval i of the
// merged ones (the runs started within an interval or so of each other;
// interval i is the i-th second of each), and returns the merged series:
// responses, errors, 503s, rates, connection waits and reconnects summed
// per interval, each operation's part alike (runs of several operations),
// the percentiles from the merged corrected histograms, exactly as the
// whole run's, and each operation's p99 from its merged log
// (record.OpLogFile). (A p99 of the shards' own send lag cannot be merged
// from their p99s: OwnLagP99Us is left 0.)
func mergeLogs(runs []run, out string, res *record.Result) ([]record.Interval, error) {
	interval := int64(res.Config.Interval)
	var series []record.Interval
	at := func(i int) *record.Interval {
		// A run's last points may hold only what came after its last
		// response (reconnects, attempts expired unsent).
		for k := len(series); k <= i; k++ {
			series = append(series, record.Interval{StartS: float64(int64(k)*interval) / 1e9, LengthS: float64(interval) / 1e9})
		}
		return &series[i]
	}
	ops := map[string]bool{}
	for _, r := range runs {
		for i, pt := range r.sum.Series {
			p := at(i)
			p.Responses += pt.Responses
			p.Errors += pt.Errors
			p.Shed += pt.Shed
			p.Rate += pt.Rate
			p.ConnWaits += pt.ConnWaits
			p.Reconnects += pt.Reconnects
			for name, o := range pt.Ops {
				m := opAt(p, name)
				m.Responses += o.Responses
				m.Rate += o.Rate
				m.Errors += o.Errors
				m.Shed += o.Shed
				p.Ops[name], ops[name] = m, true
			}
		}
	}
	if _, err := mergeLog(runs, out, res, record.UncorrectedLogFile, "uncorrected (merged)"); err != nil {
		return nil, err
	}
	hs, err := mergeLog(runs, out, res, record.CorrectedLogFile, "corrected (merged)")
	if err != nil {
		return nil, err
	}
	for i, h := range hs {
		p := at(i)
		p.P50Us, p.P99Us, p.MaxUs = float64(h.ValueAtQuantile(50))/1e3, float64(h.ValueAtQuantile(99))/1e3, float64(h.Max())/1e3
	}
	for _, name := range slices.Sorted(maps.Keys(ops)) {
		op, ok := record.OpNamed(name)
		if !ok {
			return nil, fmt.Errorf("%s: operation %q in summary.json's series is not get, put or delete", runs[0].dir, name)
		}
		hs, err := mergeLog(runs, out, res, record.OpLogFile(op), "corrected "+op.String()+" (merged)")
		if err != nil {
			return nil, err
		}
		for i, h := range hs {
			if i < len(series) && h.TotalCount() > 0 {
				m := opAt(&series[i], name)
				m.P99Us = float64(h.ValueAtQuantile(99)) / 1e3
				series[i].Ops[name] = m
			}
		}
	}
	return series, nil
}

// opAt is p's part of operation name, p.Ops made where it is nil.
func opAt(p *record.Interval, name string) record.OpInterval {
	if p.Ops == nil {
		p.Ops = map[string]record.OpInterval{}
	}
	return p.Ops[name]
}

// mergeLog merges interval i of every run's interval log name into
// interval i of out's, and returns the merged histograms.
func mergeLog(runs []run, out string, res *record.Result, name, what string) ([]*hdrhistogram.Histogram, error) {
	var merged []*hdrhistogram.Histogram
	for _, r := range runs {
		hs, err := record.ReadIntervalLog(filepath.Join(r.dir, name))
		if err != nil {
			return nil, err
		}
		for i, h := range hs {
			if i == len(merged) {
				merged = append(merged, record.NewIntervalHistogram())
			}
			merged[i].Merge(h)
		}
	}
	interval := int64(res.Config.Interval)
	l, err := record.CreateIntervalLog(filepath.Join(out, name), res.Start, what)
	if err != nil {
		return nil, err
	}
	for i, h := range merged {
		if err := l.Write(h, res.Start, int64(i)*interval, interval); err != nil {
			l.Close()
			return nil, err
		}
	}
	return merged, l.Close()
}

func hasResults(runs []run) bool {
	for _, r := range runs {
		if _, err := os.Stat(filepath.Join(r.dir, record.ResultsFile)); err != nil {
			return false
		}
	}
	return true
}

// concatResults writes every run's results.bin, one after the other, as
// one vegeta stream. Each result's attack name gets its run's folder
// ("NAME@FOLDER"), so that `vegeta plot` draws one series per loader (the
// runs' sequence numbers overlap). No file is written unless every run
// has one.
func concatResults(runs []run, path string) error {
	if !hasResults(runs) {
		return nil
	}
	return record.WriteFile(path, func(w *bufio.Writer) error {
		enc := vegeta.NewEncoder(w)
		for _, r := range runs {
			if err := copyResults(enc, filepath.Join(r.dir, record.ResultsFile), filepath.Base(filepath.Clean(r.dir))); err != nil {
				return err
			}
		}
		return nil
	})
}

func copyResults(enc vegeta.Encoder, path, label string) error {
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	defer in.Close()
	dec := vegeta.NewDecoder(bufio.NewReaderSize(in, 1<<20))
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("cannot read %s: %w", path, err)
		}
		r.Attack = strings.TrimSuffix(r.Attack+"@"+label, "@")
		if err := enc.Encode(&r); err != nil {
			return err
		}
	}
}
