// Package report turns a record.Result into what people and scripts
// read: the wrk2-style table, progress lines, summary.json and the .hgrm
// percentile distributions. It only consumes results; nothing here reaches
// back into a run.
package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// Describe is the one-line description of what c runs.
func Describe(c *config.Config) string {
	rate := "closed loop"
	if c.Rate > 0 {
		rate = fmt.Sprintf("%.0f req/s", c.Rate)
	}
	if sp := SpikeText(c); sp != "" {
		rate += ", " + sp
	}
	return DescribeLoad(c) + ", rate " + rate
}

// SpikeText describes the run's spike: "spike to 2000 req/s (2x) from
// 20s for 10s"; "" where there is none. The rate is the whole
// schedule's, as -rate is.
func SpikeText(c *config.Config) string {
	if c.Spike.IsZero() {
		return ""
	}
	factor := ""
	if c.Spike.Factor > 0 {
		factor = fmt.Sprintf(" (%gx)", c.Spike.Factor)
	}
	return fmt.Sprintf("spike to %.0f req/s%s from %v for %v", c.SpikeRate(), factor, c.Spike.At, c.Spike.Length)
}

// DescribeLoad is Describe without the rate, for runs that choose their
// own (saturate). It names only the settings that apply: the transport
// for the fast engine, the Zipf exponent for -dist zipf.
func DescribeLoad(c *config.Config) string {
	eng := c.Engine
	if c.Engine == config.EngineFast {
		eng += " (" + c.Transport + ")"
	}
	w := c.Workload
	keys := fmt.Sprintf("%d keys %s", w.Keys, w.Dist)
	if w.Dist == workload.DistZipf {
		keys += fmt.Sprintf(" s=%.2f", w.ZipfS)
	}
	value := ""
	if w.Mix.Put > 0 {
		value = fmt.Sprintf(", value %d B", w.ValueSize)
	}
	loops := "loops by need"
	switch {
	case c.Engine == config.EngineVegeta:
		loops = "vegeta's workers"
	case c.Loops > 0:
		loops = fmt.Sprintf("%d loops", c.Loops)
	}
	if !c.CPUs.IsEmpty() {
		loops += " on CPUs " + c.CPUs.String()
	}
	return fmt.Sprintf("engine %s, %s, %d connections (max %d), workload %s, %s%s",
		eng, loops, c.Conns, c.MaxConns, w, keys, value)
}

// Print writes r's report in wrk2's layout: both percentile tables, then
// counts, rates, loader cost and any warnings.
func Print(w io.Writer, r *record.Result) {
	c := &r.Config
	fmt.Fprintf(w, "Running %v test @ %s%s\n", c.Duration, strings.TrimSuffix(c.Target, "/"), api.PathEntity)
	fmt.Fprintf(w, "  %s\n\n", Describe(c))
	latency.PrintTable(w, latency.TitleCorrected, r.Corrected)
	fmt.Fprintln(w)
	latency.PrintTable(w, latency.TitleUncorrected, r.Uncorrected)
	fmt.Fprintln(w)
	quantum := ""
	if r.Quantum > 0 {
		how := "-quantum"
		if c.Quantum == 0 {
			how = "sized to the rate and the answers"
		}
		quantum = fmt.Sprintf(" (quantum %s, %s)", latency.FormatMicros(latency.Micros(r.Quantum)), how)
	}
	fmt.Fprintf(w, "  Send lag (scheduled → actual send): p50 %s, p99 %s, max %s; %d sends more than %v late%s\n",
		latency.FormatMicros(r.SendLag.ValueAtPercentile(50)), latency.FormatMicros(r.SendLag.ValueAtPercentile(99)),
		latency.FormatMicros(r.SendLag.Max()), r.Late, record.LateThreshold, quantum)
	fmt.Fprintf(w, "  %d requests in %.2fs, %s read, %s written\n", r.Sent, r.Elapsed.Seconds(), BytesText(r.BytesIn), BytesText(r.BytesOut))
	if asked := c.AskedRate(); asked > 0 {
		avg := ""
		if !c.Spike.IsZero() {
			avg = " on average over the spike and the rest"
		}
		fmt.Fprintf(w, "Requests/sec: %10.2f  (asked %.0f%s: %.2f%%; sending %.2f/s)\n", r.AchievedRate(), asked, avg, 100*r.AchievedRate()/asked, r.SendRate())
	} else {
		fmt.Fprintf(w, "Requests/sec: %10.2f  (closed loop)\n", r.AchievedRate())
	}
	fmt.Fprintf(w, "Status codes: %s\n", CodesText(r.Codes))
	fmt.Fprintf(w, "Errors:       %d (%.3f%%)\n", r.ErrorCount, 100*r.ErrorRate())
	PrintErrors(w, r.Errors)
	PrintOps(w, r)
	if line := ClientsText(r); line != "" {
		fmt.Fprintf(w, "%s\n", line)
	}
	fmt.Fprintf(w, "Connections:  %d at start, %d at peak (cap %d); %d carried requests, %d reconnects; at most %d requests in flight\n",
		r.ConnsStart, r.ConnsPeak, c.MaxConns, r.ConnsUsed, r.Reconnects, r.InFlightPeak)
	fmt.Fprintf(w, "Loader CPU:   %.2fs user + %.2fs sys = %.1f µs/request (%.0f%% of one core)\n",
		r.CPU.User.Seconds(), r.CPU.System.Seconds(), Micros(r.CPUPerRequest()), 100*r.CPU.Total().Seconds()/max(r.Elapsed.Seconds(), 1e-9))
	if line := LoaderText(r); line != "" {
		fmt.Fprintf(w, "%s\n", line)
	}
	if r.LoopsWhy != "" {
		fmt.Fprintf(w, "Loops:        %s\n", r.LoopsWhy)
	}
	if line := ShardText(c); line != "" {
		fmt.Fprintf(w, "%s\n", line)
	}
	for _, warn := range r.Warnings() {
		fmt.Fprintf(w, "\n*** WARNING: %s ***\n", warn)
	}
}

// PrintOps writes, for a run of more than one operation, a table of each
// one's responses, rate, errors, 503s and corrected latencies; nothing
// for a run of one, whose figures are the run's.
//
//	Per operation (corrected latency):
//	  op           responses     req/s   errors     503s       p50       p99     p99.9       max
//	  GET              27000    900.00        0        0   412.00us    1.21ms    3.02ms    9.87ms
func PrintOps(w io.Writer, r *record.Result) {
	if len(r.Ops) < 2 {
		return
	}
	fmt.Fprintf(w, "Per operation (corrected latency):\n")
	fmt.Fprintf(w, "  %-8s %12s %9s %8s %8s %9s %9s %9s %9s\n", "op", "responses", "req/s", "errors", "503s", "p50", "p99", "p99.9", "max")
	for i := range r.Ops {
		o := &r.Ops[i]
		at := func(p float64) string { return latency.FormatMicros(o.Corrected.ValueAtPercentile(p)) }
		fmt.Fprintf(w, "  %-8s %12d %9.2f %8d %8d %9s %9s %9s %9s\n", o.Op, o.Sent, record.PerSecond(o.Sent, r.Elapsed), o.ErrorCount, o.Shed(),
			at(50), at(99), at(99.9), latency.FormatMicros(o.Corrected.Max()))
	}
}

// ClientsText says what a run's clients did, under a client model:
// "Clients:      timeout 1s, …; 10,000 first tries + 4,210 retries
// (×1.42), 312 throttled; 9,100 useful answers (303.3/s), 2,400
// timeouts, 1,810 503s, 900 given up"; "" without a client model.
func ClientsText(r *record.Result) string {
	m := r.Config.Client
	if m.IsZero() {
		return ""
	}
	t := r.Clients
	line := fmt.Sprintf("Clients:      %s; %d first tries + %d retries (×%.2f)", m, t.FirstTries, t.Retries, t.Amplification())
	if t.Throttled > 0 {
		line += fmt.Sprintf(", %d throttled", t.Throttled)
	}
	line += fmt.Sprintf("; %d useful answers (%.1f/s), %d timeouts", t.Useful, r.UsefulGoodput(), t.Timeouts)
	if t.Expired > 0 {
		line += fmt.Sprintf(" (%d before a connection was free to send them)", t.Expired)
	}
	line += fmt.Sprintf(", %d 503s, %d given up", t.Shed, t.GaveUp)
	if t.UnsentRetries > 0 {
		line += fmt.Sprintf(" (%d retries still waiting when the run ended)", t.UnsentRetries)
	}
	return line
}

// LoaderText describes where the loader ran: "loader: 2 loops on CPUs
// 0-1 (pinned)", "loader: 4 loops, unpinned (no -cpus; CPUs 0-15
// allowed)", or "loader: 2 loops, unpinned: <why pinning failed>"; ""
// for a result that does not say (merged from older runs).
func LoaderText(r *record.Result) string {
	if r.Loops == 0 {
		return ""
	}
	loops := fmt.Sprintf("%d loops", r.Loops)
	if r.Loops == 1 {
		loops = "1 loop"
	}
	switch {
	case r.Pinned && !r.LoaderCPUSet.IsEmpty():
		return fmt.Sprintf("loader: %s on CPUs %s (pinned)", loops, r.LoaderCPUSet)
	case r.Pinned:
		return fmt.Sprintf("loader: %s on %d CPUs (pinned)", loops, r.LoaderCPUs)
	case r.Unpinned == "no -cpus" && !r.LoaderCPUSet.IsEmpty():
		return fmt.Sprintf("loader: %s, unpinned (no -cpus; CPUs %s allowed)", loops, r.LoaderCPUSet)
	case r.Unpinned == "no -cpus":
		return fmt.Sprintf("loader: %s, unpinned (no -cpus)", loops)
	}
	return fmt.Sprintf("loader: %s, unpinned: %s", loops, r.Unpinned)
}

// ShardText describes the schedule of a run that was one shard of it, or
// started at an agreed instant: "shard 2/4 of a 40000 req/s schedule
// starting 2026-11-24T12:00:00Z"; "" for a run of its own.
func ShardText(c *config.Config) string {
	switch {
	case !c.Shard.IsWhole():
		return fmt.Sprintf("shard %s of a %.0f req/s schedule starting %s", c.Shard, c.Rate, c.StartAt.UTC().Format(time.RFC3339Nano))
	case !c.StartAt.IsZero() && c.Rate > 0:
		return fmt.Sprintf("a %.0f req/s schedule starting %s", c.Rate, c.StartAt.UTC().Format(time.RFC3339Nano))
	case !c.StartAt.IsZero():
		return fmt.Sprintf("closed loop starting %s", c.StartAt.UTC().Format(time.RFC3339Nano))
	}
	return ""
}

// PrintErrors writes one line per kind of error, most frequent first.
func PrintErrors(w io.Writer, errs map[string]int64) {
	byCount := func(a, b string) int { return cmp.Or(cmp.Compare(errs[b], errs[a]), strings.Compare(a, b)) }
	for _, msg := range slices.SortedFunc(maps.Keys(errs), byCount) {
		fmt.Fprintf(w, "  %8d  %s\n", errs[msg], msg)
	}
}

// CodesText is "200: 5, 404: 1", codes in order; 0 is "no response".
func CodesText(codes map[int]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(codes)) {
		name := fmt.Sprint(k)
		if k == 0 {
			name = "no response"
		}
		parts = append(parts, fmt.Sprintf("%s: %d", name, codes[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// BytesText is n in B, KB, MB or GB.
func BytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fGB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fMB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fKB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// Micros is d in microseconds.
func Micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Progress returns a progress callback that writes one line per snapshot
// to w, such as
//
//	[   5s] 10001 req/s (asked 10000)  done 50003  p99 1.23ms  errors 0  conns 64
func Progress(w io.Writer) func(record.Progress) {
	return func(p record.Progress) {
		asked := "closed loop"
		if p.Asked > 0 {
			asked = fmt.Sprintf("asked %.0f", p.Asked)
		}
		done := fmt.Sprintf("%d", p.Completed)
		if p.Planned != 0 && p.Planned != math.MaxUint64 {
			done += fmt.Sprintf("/%d", p.Planned)
		}
		fmt.Fprintf(w, "[%5.0fs] %.0f req/s (%s)  done %s  p99 %s  errors %d  conns %d\n",
			p.Elapsed.Seconds(), p.Rate, asked, done, latency.FormatDuration(p.P99), p.Errors, p.Conns)
	}
}
