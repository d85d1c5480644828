package loadgen

import (
	"strconv"
	"time"

	"github.com/kvpool/kvpool/internal/latency"
)

// Summary is summary.json: a Result reduced to numbers, stable for
// scripts (the compare report reads it). Durations are milliseconds or
// microseconds as the field name says; rates are per second.
type Summary struct {
	Name      string    `json:"name"`
	StartedAt time.Time `json:"started_at"`
	Target    string    `json:"target"`
	Engine    string    `json:"engine"`
	Transport string    `json:"transport,omitempty"`
	Workload  string    `json:"workload"`
	Keys      uint64    `json:"keys"`
	Dist      string    `json:"dist"`
	ValueSize int       `json:"value_size"`

	AskedRate    float64 `json:"asked_rate"` // 0 = closed loop
	DurationS    float64 `json:"duration_s"`
	ElapsedS     float64 `json:"elapsed_s"`
	AchievedRate float64 `json:"achieved_rate"`
	SendRate     float64 `json:"send_rate"`

	Planned uint64 `json:"planned"`
	Sent    int64  `json:"sent"`
	Unsent  int64  `json:"unsent"`
	Late    int64  `json:"late_sends"`

	StatusCodes map[string]int64 `json:"status_codes"` // "0" = no response
	Errors      int64            `json:"errors"`
	ErrorRate   float64          `json:"error_rate"`
	ErrorKinds  map[string]int64 `json:"error_kinds,omitempty"`

	Corrected   latency.Summary `json:"latency_corrected"`
	Uncorrected latency.Summary `json:"latency_uncorrected"`
	SendLag     latency.Summary `json:"send_lag"`

	BytesIn    int64 `json:"bytes_in"`
	BytesOut   int64 `json:"bytes_out"`
	ConnsStart int   `json:"conns_start"`
	ConnsPeak  int   `json:"conns_peak"`
	MaxConns   int   `json:"max_conns"`

	LoaderCPUUserS    float64  `json:"loader_cpu_user_s"`
	LoaderCPUSysS     float64  `json:"loader_cpu_sys_s"`
	LoaderCPUPerReqUs float64  `json:"loader_cpu_per_request_us"`
	Warnings          []string `json:"warnings"`
}

// Summary reduces r to its summary.json form.
func (r *Result) Summary() Summary {
	c := &r.Config
	s := Summary{
		Name: c.Name, StartedAt: r.Start, Target: c.Target, Engine: c.Engine,
		Workload: c.Workload.String(), Keys: c.Workload.Keys, Dist: c.Workload.Dist, ValueSize: c.Workload.ValueSize,
		AskedRate: c.Rate, DurationS: c.Duration.Seconds(), ElapsedS: r.Elapsed.Seconds(),
		AchievedRate: r.AchievedRate(), SendRate: r.SendRate(),
		Planned: r.Planned, Sent: r.Sent, Unsent: r.Unsent(), Late: r.Late,
		StatusCodes: map[string]int64{}, Errors: r.ErrorCount, ErrorRate: r.ErrorRate(), ErrorKinds: r.Errors,
		Corrected: latency.Summarize(r.Corrected), Uncorrected: latency.Summarize(r.Uncorrected), SendLag: latency.Summarize(r.SendLag),
		BytesIn: r.BytesIn, BytesOut: r.BytesOut, ConnsStart: r.ConnsStart, ConnsPeak: r.ConnsPeak, MaxConns: c.MaxConns,
		LoaderCPUUserS: r.CPU.User.Seconds(), LoaderCPUSysS: r.CPU.System.Seconds(), LoaderCPUPerReqUs: micros(r.CPUPerRequest()),
		Warnings: r.Warnings(),
	}
	if c.Engine == EngineFast {
		s.Transport = c.Transport
	}
	for code, n := range r.Codes {
		s.StatusCodes[strconv.Itoa(code)] = n
	}
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	return s
}
