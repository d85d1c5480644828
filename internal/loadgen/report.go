package loadgen

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kvpool/kvpool/internal/latency"
)

// Describe is the one-line description of what cfg runs.
func (c *Config) Describe() string {
	eng := c.Engine
	if c.Engine == EngineFast {
		eng += " (" + c.Transport + ")"
	}
	rate := "closed loop"
	if c.Rate > 0 {
		rate = fmt.Sprintf("%.0f req/s", c.Rate)
	}
	w := c.Workload
	keys := fmt.Sprintf("%d keys %s", w.Keys, w.Dist)
	if w.Dist == DistZipf {
		keys += fmt.Sprintf(" s=%.2f", w.ZipfS)
	}
	return fmt.Sprintf("engine %s, %d connections (max %d), workload %s, %s, value %d B, rate %s",
		eng, c.Conns, c.MaxConns, w, keys, w.ValueSize, rate)
}

// Print writes the run's report in wrk2's layout: both percentile tables,
// then counts, rates, loader cost and any warnings.
func (r *Result) Print(w io.Writer) {
	c := &r.Config
	fmt.Fprintf(w, "Running %v test @ %s%s\n", c.Duration, strings.TrimSuffix(c.Target, "/"), apiPath)
	fmt.Fprintf(w, "  %s\n\n", c.Describe())
	latency.PrintTable(w, latency.TitleCorrected, r.Corrected)
	fmt.Fprintln(w)
	latency.PrintTable(w, latency.TitleUncorrected, r.Uncorrected)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  Send lag (scheduled → actual send): p50 %s, p99 %s, max %s; %d sends more than %v late\n",
		latency.FormatMicros(r.SendLag.ValueAtPercentile(50)), latency.FormatMicros(r.SendLag.ValueAtPercentile(99)),
		latency.FormatMicros(r.SendLag.Max()), r.Late, lateThreshold)
	fmt.Fprintf(w, "  %d requests in %.2fs, %s read, %s written\n", r.Sent, r.Elapsed.Seconds(), bytesText(r.BytesIn), bytesText(r.BytesOut))
	if c.Rate > 0 {
		fmt.Fprintf(w, "Requests/sec: %10.2f  (asked %.0f: %.2f%%; sending %.2f/s)\n", r.AchievedRate(), c.Rate, 100*r.AchievedRate()/c.Rate, r.SendRate())
	} else {
		fmt.Fprintf(w, "Requests/sec: %10.2f  (closed loop)\n", r.AchievedRate())
	}
	fmt.Fprintf(w, "Status codes: %s\n", codesText(r.Codes))
	fmt.Fprintf(w, "Errors:       %d (%.3f%%)\n", r.ErrorCount, 100*r.ErrorRate())
	for _, e := range sortedErrors(r.Errors) {
		fmt.Fprintf(w, "  %8d  %s\n", e.n, e.msg)
	}
	fmt.Fprintf(w, "Connections:  %d at start, %d at peak (cap %d)\n", r.ConnsStart, r.ConnsPeak, c.MaxConns)
	fmt.Fprintf(w, "Loader CPU:   %.2fs user + %.2fs sys = %.1f µs/request (%.0f%% of one core)\n",
		r.CPU.User.Seconds(), r.CPU.System.Seconds(), micros(r.CPUPerRequest()), 100*r.CPU.Total().Seconds()/max(r.Elapsed.Seconds(), 1e-9))
	for _, warn := range r.Warnings() {
		fmt.Fprintf(w, "\n*** WARNING: %s ***\n", warn)
	}
}

func codesText(codes map[int]int64) string {
	keys := make([]int, 0, len(codes))
	for k := range codes {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
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

type errorCount struct {
	msg string
	n   int64
}

// sortedErrors orders error messages by count, most frequent first.
func sortedErrors(m map[string]int64) []errorCount {
	out := make([]errorCount, 0, len(m))
	for msg, n := range m {
		out = append(out, errorCount{msg, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].msg < out[j].msg
	})
	return out
}

func bytesText(n int64) string {
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
