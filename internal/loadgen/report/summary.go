package report

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// Files WriteFiles writes beside the ones the run streamed (the interval
// logs and results.bin, see loadgen).
const (
	SummaryFile     = "summary.json"
	CorrectedFile   = "latency-corrected.hgrm"
	UncorrectedFile = "latency-uncorrected.hgrm"
)

// Summary is summary.json: a Result reduced to numbers, stable for scripts
// and for `loadtest merge`. Durations are milliseconds or microseconds as
// the field name says; rates are per second.
type Summary struct {
	Name      string    `json:"name"`
	StartedAt time.Time `json:"started_at"`
	Target    string    `json:"target"`
	// Server is the target's kvserver_config_info labels (pool, workers,
	// cap, ...); absent when the target is not a kvserver.
	Server    map[string]string `json:"server,omitempty"`
	Engine    string            `json:"engine"`
	Transport string            `json:"transport,omitempty"`
	Workload  string            `json:"workload"`
	Keys      uint64            `json:"keys"`
	Dist      string            `json:"dist"`
	ValueSize int               `json:"value_size"`
	Conns     int               `json:"conns"`

	// AskedRate is 0 for a closed loop; with a Spike, the rate asked
	// averaged over the run (Planned over DurationS, to within a request).
	AskedRate    float64 `json:"asked_rate"`
	DurationS    float64 `json:"duration_s"`
	ElapsedS     float64 `json:"elapsed_s"`
	SendSpanS    float64 `json:"send_span_s"`
	AchievedRate float64 `json:"achieved_rate"`
	SendRate     float64 `json:"send_rate"`

	Planned uint64 `json:"planned"`
	Sent    int64  `json:"sent"`
	Unsent  int64  `json:"unsent"`
	Late    int64  `json:"late_sends"`
	// ConnWaits are the attempts that waited for a connection (every
	// one busy waiting on the server, or theirs being dialled again),
	// OwnLate the sends that did not and still started over 1 ms late:
	// the loader's own lag. OwnLagKnown: the engine told the two apart
	// (the fast engine's event loop); without it both are 0.
	ConnWaits   int64 `json:"conn_waits"`
	OwnLate     int64 `json:"own_late_sends"`
	OwnLagKnown bool  `json:"own_lag_known"`

	StatusCodes map[string]int64 `json:"status_codes"` // "0" = no response
	Errors      int64            `json:"errors"`
	ErrorRate   float64          `json:"error_rate"`
	ErrorKinds  map[string]int64 `json:"error_kinds,omitempty"`

	Corrected   latency.Summary `json:"latency_corrected"`
	Uncorrected latency.Summary `json:"latency_uncorrected"`
	SendLag     latency.Summary `json:"send_lag"`

	// Ops is each operation the run sent, keyed "get", "put", "delete":
	// its figures alone (a run of one operation has one, equal to the
	// run's). Their counts sum to the run's.
	Ops map[string]OpSummary `json:"ops,omitempty"`

	// IntervalS is the length of each point of Series (and of each
	// histogram of the .hlog files); Series is rate, errors and corrected
	// latency over time.
	IntervalS float64           `json:"interval_s"`
	Series    []record.Interval `json:"series"`
	// VegetaLatency says what results.bin's latencies mean.
	VegetaLatency string `json:"vegeta_latency"`

	BytesIn    int64 `json:"bytes_in"`
	BytesOut   int64 `json:"bytes_out"`
	ConnsStart int   `json:"conns_start"`
	ConnsPeak  int   `json:"conns_peak"`
	MaxConns   int   `json:"max_conns"`
	// ConnsUsed is how many connections carried at least one request;
	// Reconnects how often a connection the server had closed was dialled
	// again; InFlightPeak the most requests in flight at once.
	ConnsUsed    int   `json:"conns_used"`
	Reconnects   int64 `json:"reconnects"`
	InFlightPeak int   `json:"in_flight_peak"`

	// The loader: its event loops, how many CPUs and which it ran on
	// (its -cpus where it pinned itself to them, else those its affinity
	// allowed: its CPU share is (user + sys) / (elapsed × loader_cpus)),
	// and whether it was pinned, or why not ("no -cpus", or the error).
	QuantumUs     float64 `json:"quantum_us,omitempty"`
	Loops         int     `json:"loops"`
	LoopsWhy      string  `json:"loops_why,omitempty"`
	LoaderCPUs    int     `json:"loader_cpus"`
	LoaderCPUList string  `json:"loader_cpu_list"`
	Pinned        bool    `json:"pinned"`
	Unpinned      string  `json:"unpinned,omitempty"`
	// Shard is this run's part of a schedule that several loaders sent
	// (-shard K/N), WholeRate that schedule's rate and StartAt the instant
	// they agreed it starts (-start-at). AskedRate and Planned are then
	// this shard's share; merge sums them back to the whole.
	Shard     *schedule.Shard `json:"shard,omitempty"`
	WholeRate float64         `json:"whole_rate,omitempty"`
	StartAt   *time.Time      `json:"start_at,omitempty"`
	// Spike is the run's spike (-spike), if it had one.
	Spike *SpikeSummary `json:"spike,omitempty"`

	// Client is the run's client model (its timeout, retries, backoff,
	// budget, throttle; absent: clients that send each request once and
	// wait), Clients what they did: first tries and retries sent,
	// throttled, useful answers (to a client still waiting), timeouts,
	// 503s, requests given up. Amplification is attempts sent per first
	// try; UsefulGoodput useful answers per second.
	Client        *client.Model        `json:"client,omitempty"`
	Clients       *record.ClientTotals `json:"clients,omitempty"`
	Amplification float64              `json:"amplification,omitempty"`
	UsefulGoodput float64              `json:"useful_goodput,omitempty"`

	LoaderCPUUserS    float64  `json:"loader_cpu_user_s"`
	LoaderCPUSysS     float64  `json:"loader_cpu_sys_s"`
	LoaderCPUPerReqUs float64  `json:"loader_cpu_per_request_us"`
	Warnings          []string `json:"warnings"`

	// The whole run's histograms (µs), compressed (HdrHistogram's V2
	// encoding, base64), so that runs can be merged exactly.
	HistCorrected   string `json:"hdr_corrected"`
	HistUncorrected string `json:"hdr_uncorrected"`
	HistSendLag     string `json:"hdr_send_lag"`
}

// OpSummary is one operation's part of a run in summary.json: its
// responses (sent, each answered or failed) and their rate over the run,
// status codes, errors and 503s, and its latencies, with their
// histograms (µs, encoded as Summary's) for merge.
type OpSummary struct {
	Responses       int64            `json:"responses"`
	AchievedRate    float64          `json:"achieved_rate"`
	StatusCodes     map[string]int64 `json:"status_codes"`
	Errors          int64            `json:"errors"`
	ErrorRate       float64          `json:"error_rate"`
	ErrorKinds      map[string]int64 `json:"error_kinds,omitempty"`
	Shed            int64            `json:"shed"`
	Corrected       latency.Summary  `json:"latency_corrected"`
	Uncorrected     latency.Summary  `json:"latency_uncorrected"`
	HistCorrected   string           `json:"hdr_corrected"`
	HistUncorrected string           `json:"hdr_uncorrected"`
}

// summarizeOps is r's Ops in summary.json's form (nil: none).
func summarizeOps(r *record.Result) map[string]OpSummary {
	if len(r.Ops) == 0 {
		return nil
	}
	out := make(map[string]OpSummary, len(r.Ops))
	for i := range r.Ops {
		o := &r.Ops[i]
		out[record.OpName(o.Op)] = OpSummary{
			Responses: o.Sent, AchievedRate: record.PerSecond(o.Sent, r.Elapsed), StatusCodes: codeKeys(o.Codes),
			Errors: o.ErrorCount, ErrorRate: o.ErrorRate(), ErrorKinds: o.Errors, Shed: o.Shed(),
			Corrected: latency.Summarize(o.Corrected), Uncorrected: latency.Summarize(o.Uncorrected),
			HistCorrected: encodeHist(o.Corrected), HistUncorrected: encodeHist(o.Uncorrected),
		}
	}
	return out
}

// codeKeys is codes keyed as summary.json keys them ("0" = no response).
func codeKeys(codes map[int]int64) map[string]int64 {
	out := make(map[string]int64, len(codes))
	for code, n := range codes {
		out[strconv.Itoa(code)] = n
	}
	return out
}

// SpikeSummary is a run's spike in summary.json: from AtS seconds after
// the start, for LengthS, the whole schedule asked Rate req/s (Factor ×
// BaseRate where it was given as a factor) instead of BaseRate.
type SpikeSummary struct {
	Rate     float64 `json:"rate"`
	Factor   float64 `json:"factor,omitempty"`
	BaseRate float64 `json:"base_rate"`
	AtS      float64 `json:"at_s"`
	LengthS  float64 `json:"length_s"`
}

// Summarize reduces r to its summary.json form; server is the target's
// kvserver_config_info (nil if it is not a kvserver).
func Summarize(r *record.Result, server map[string]string) Summary {
	c := &r.Config
	s := Summary{
		Name: c.Name, StartedAt: r.Start, Target: c.Target, Server: server, Engine: c.Engine,
		Workload: c.Workload.String(), Keys: c.Workload.Keys, Dist: c.Workload.Dist, ValueSize: c.Workload.ValueSize, Conns: c.Conns,
		AskedRate: c.AskedRate(), DurationS: c.Duration.Seconds(), ElapsedS: r.Elapsed.Seconds(), SendSpanS: r.SendSpan.Seconds(),
		AchievedRate: r.AchievedRate(), SendRate: r.SendRate(),
		Planned: r.Planned, Sent: r.Sent, Unsent: r.Unsent(), Late: r.Late,
		ConnWaits: r.ConnWaits, OwnLate: r.OwnLate, OwnLagKnown: r.OwnLagKnown,
		StatusCodes: codeKeys(r.Codes), Errors: r.ErrorCount, ErrorRate: r.ErrorRate(), ErrorKinds: r.Errors,
		Corrected: latency.Summarize(r.Corrected), Uncorrected: latency.Summarize(r.Uncorrected), SendLag: latency.Summarize(r.SendLag),
		Ops:       summarizeOps(r),
		IntervalS: c.Interval.Seconds(), Series: r.Intervals, VegetaLatency: c.VegetaLatency,
		BytesIn: r.BytesIn, BytesOut: r.BytesOut, ConnsStart: r.ConnsStart, ConnsPeak: r.ConnsPeak, MaxConns: c.MaxConns,
		ConnsUsed: r.ConnsUsed, Reconnects: r.Reconnects, InFlightPeak: r.InFlightPeak,
		LoaderCPUUserS: r.CPU.User.Seconds(), LoaderCPUSysS: r.CPU.System.Seconds(), LoaderCPUPerReqUs: Micros(r.CPUPerRequest()),
		QuantumUs: Micros(r.Quantum), Loops: r.Loops, LoopsWhy: r.LoopsWhy, LoaderCPUs: r.LoaderCPUs, LoaderCPUList: r.LoaderCPUSet.String(), Pinned: r.Pinned, Unpinned: r.Unpinned,
		Warnings:      r.Warnings(),
		HistCorrected: encodeHist(r.Corrected), HistUncorrected: encodeHist(r.Uncorrected), HistSendLag: encodeHist(r.SendLag),
	}
	if c.Engine == config.EngineFast {
		s.Transport = c.Transport
	}
	if !c.Client.IsZero() {
		m, t := c.Client, r.Clients
		s.Client, s.Clients = &m, &t
		s.Amplification, s.UsefulGoodput = t.Amplification(), r.UsefulGoodput()
	}
	if c.Shard != (schedule.Shard{}) {
		sh := c.Shard
		s.Shard, s.WholeRate = &sh, c.Rate
	}
	if !c.Spike.IsZero() {
		s.Spike = &SpikeSummary{Rate: c.SpikeRate(), Factor: c.Spike.Factor, BaseRate: c.Rate, AtS: c.Spike.At.Seconds(), LengthS: c.Spike.Length.Seconds()}
	}
	if !c.StartAt.IsZero() {
		at := c.StartAt.UTC()
		s.StartAt = &at
	}
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	if s.Series == nil {
		s.Series = []record.Interval{}
	}
	return s
}

func encodeHist(h *hdrhistogram.Histogram) string {
	if h == nil {
		return ""
	}
	b, err := h.EncodeV2()
	if err != nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

// DecodeHist reverses the encoding of Summary's Hist fields.
func DecodeHist(s string) (*hdrhistogram.Histogram, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	return hdrhistogram.Decode(b)
}

// ResultOf is the Result s summarizes, as far as summary.json keeps it
// (what merge combines): the config's workload, target, engine, lengths,
// rate (the asked rate) and connections, the counts, CPU time and CPUs,
// the whole run's histograms and each operation's part.
func ResultOf(s Summary) (*record.Result, error) {
	mix, err := workload.ParseMix(s.Workload)
	if err != nil {
		return nil, err
	}
	c := config.Default()
	c.Name, c.Target, c.Engine, c.Transport = s.Name, s.Target, s.Engine, s.Transport
	c.Workload = workload.Workload{Mix: mix, Keys: s.Keys, Dist: s.Dist, ValueSize: s.ValueSize, ZipfS: c.Workload.ZipfS}
	c.Duration, c.Interval, c.VegetaLatency = Seconds(s.DurationS), Seconds(s.IntervalS), s.VegetaLatency
	c.Rate, c.Conns, c.MaxConns = s.AskedRate, s.Conns, s.MaxConns
	r := &record.Result{Config: c, Start: s.StartedAt, Elapsed: Seconds(s.ElapsedS), SendSpan: Seconds(s.SendSpanS),
		Planned: s.Planned, Sent: s.Sent, Late: s.Late, ConnWaits: s.ConnWaits, OwnLate: s.OwnLate, OwnLagKnown: s.OwnLagKnown,
		ErrorCount: s.Errors, Errors: s.ErrorKinds, BytesIn: s.BytesIn, BytesOut: s.BytesOut,
		ConnsStart: s.ConnsStart, ConnsPeak: s.ConnsPeak, ConnsUsed: s.ConnsUsed, Reconnects: s.Reconnects, InFlightPeak: s.InFlightPeak,
		Loops: s.Loops, LoaderCPUs: s.LoaderCPUs, Pinned: s.Pinned, Unpinned: s.Unpinned,
		CPU: record.CPUTime{User: Seconds(s.LoaderCPUUserS), System: Seconds(s.LoaderCPUSysS)}}
	if s.Clients != nil {
		r.Config.Client, r.Clients = *s.Client, *s.Clients
	}
	if r.Codes, err = codesOf(s.StatusCodes); err != nil {
		return nil, err
	}
	for _, h := range []struct {
		into     **hdrhistogram.Histogram
		enc, key string
	}{{&r.Corrected, s.HistCorrected, "hdr_corrected"}, {&r.Uncorrected, s.HistUncorrected, "hdr_uncorrected"}, {&r.SendLag, s.HistSendLag, "hdr_send_lag"}} {
		if *h.into, err = DecodeHist(h.enc); err != nil {
			return nil, fmt.Errorf("%s in summary.json: %w", h.key, err)
		}
	}
	for name, sum := range s.Ops {
		op, ok := record.OpNamed(name)
		if !ok {
			return nil, fmt.Errorf("operation %q in summary.json's ops is not get, put or delete", name)
		}
		o := record.OpResult{Op: op, Sent: sum.Responses, ErrorCount: sum.Errors, Errors: sum.ErrorKinds}
		if o.Codes, err = codesOf(sum.StatusCodes); err != nil {
			return nil, err
		}
		if o.Corrected, err = DecodeHist(sum.HistCorrected); err == nil {
			o.Uncorrected, err = DecodeHist(sum.HistUncorrected)
		}
		if err != nil {
			return nil, fmt.Errorf("the histograms of %s in summary.json's ops: %w", name, err)
		}
		r.Ops = append(r.Ops, o)
	}
	slices.SortFunc(r.Ops, func(a, b record.OpResult) int { return slices.Index(record.Ops, a.Op) - slices.Index(record.Ops, b.Op) })
	return r, nil
}

// codesOf reverses codeKeys.
func codesOf(keys map[string]int64) (map[int]int64, error) {
	out := make(map[int]int64, len(keys))
	for k, n := range keys {
		code, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("status code %q in summary.json: %w", k, err)
		}
		out[code] = n
	}
	return out, nil
}

// Seconds is s seconds (summary.json's _s fields) as a Duration.
func Seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// WriteFiles writes summary.json and the two .hgrm percentile
// distributions of r into dir (created if missing).
func WriteFiles(dir string, r *record.Result, server map[string]string) error {
	if err := WriteJSON(dir, SummaryFile, Summarize(r, server)); err != nil {
		return err
	}
	for name, h := range map[string]*hdrhistogram.Histogram{CorrectedFile: r.Corrected, UncorrectedFile: r.Uncorrected} {
		if err := record.WriteFile(filepath.Join(dir, name), func(w *bufio.Writer) error { return latency.WriteHGRM(w, h) }); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes v, indented, as dir/name, creating dir if needed.
func WriteJSON(dir, name string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create output directory: %w", err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w", name, err)
	}
	return nil
}

// ReadSummary reads dir/summary.json.
func ReadSummary(dir string) (Summary, error) {
	var s Summary
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return s, fmt.Errorf("cannot read the run in %s: %w", dir, err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("cannot parse %s: %w", filepath.Join(dir, SummaryFile), err)
	}
	return s, nil
}

// ResultsRoot is where runs get their folders by default.
const ResultsRoot = "results"

// NewDir creates the run's folder: dir, or where dir is "" DefaultDir's
// for now.
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

// ErrNotEmpty ends PrepareDir's refusal of a folder that holds files:
// the command line's fault, which a new -out, or none, mends.
var ErrNotEmpty = errors.New("give a new or empty directory, or leave -out out for a fresh results/<time>-... folder")

// PrepareDir creates dir, refusing one that already holds files: a run
// never mixes its files with an earlier run's.
func PrepareDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("cannot read -out %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("-out %s already holds %d files (%s, ...); %w", dir, len(entries), entries[0].Name(), ErrNotEmpty)
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

// ServerText describes the kvserver's settings for a run's header line.
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
