package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/report"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// exitCode is the status run gives for err.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// The verdict line and exit status of each kind of outcome.
func TestSaturateOutcome(t *testing.T) {
	sc := saturate.DefaultConfig()
	f := func(sat saturate.Saturation, wantCode int, wantOut, wantErr string) {
		t.Helper()
		var out bytes.Buffer
		err := saturateOutcome(&out, &sc, &sat)
		if err != nil {
			assert.Contains(t, err.Error(), wantErr)
		}
		assert.Equal(t, wantCode, exitCode(err), out.String())
		assert.Contains(t, out.String(), wantOut)
	}
	validate := func(rates ...float64) []saturate.Step {
		var steps []saturate.Step
		for _, r := range rates {
			steps = append(steps, saturate.Step{Phase: saturate.PhaseValidate, Asked: r}, saturate.Step{Phase: saturate.PhaseValidate, Asked: r, Retry: true})
		}
		return steps
	}
	f(saturate.Saturation{Rate: 40_000, Validated: true, Candidate: 40_000, Bracket: saturate.Bracket{Lo: 40_000, Hi: 41_000}}, 0,
		"saturation: 40000 req/s (validated over 30s; bracket 40000–41000 req/s (2.5 %))", "")
	f(saturate.Saturation{Candidate: 39_000, Bracket: saturate.Bracket{Lo: 38_000, Hi: 39_000}, Steps: validate(40_000, 39_000)}, exitNotValidated,
		"saturation: none validated: rates held over 11s steps, but none over a 30s validating run (tried at 40000, 39000 req/s, each twice)", "rerun with a longer -step")
	why := "at 31000 req/s fell behind while it had connections free: the loader's own sends were late (p99 over 10ms) in 9 of 10 intervals, at worst 40ms (the loader at 7% of its 16 CPUs, the server at 30% of its 16 CPUs): the loader did not send"
	f(saturate.Saturation{Rate: 30_000, Validated: true, Candidate: 30_000, LoaderBound: true, LoaderCeiling: 31_000, LoaderCPUs: 16, Why: why}, exitLoaderBound,
		"saturation: ≥ 30000 req/s (validated over 30s), loader-bound with 16 loader CPUs: give it more CPUs (-cpus) or more hosts (-shard, merge)\n  "+why,
		"30000 req/s is only a lower bound: the loader could not offer more")
	// Every validation failed loader-bound: a lower bound too, not exit 3.
	f(saturate.Saturation{Candidate: 30_000, LoaderBound: true, LoaderCPUs: 2, Why: "the validating run at 30000 req/s: the loader used 95% of its 2 CPUs"}, exitLoaderBound,
		"saturation: ≥ 30000 req/s (held over 11s steps, not over a validation), loader-bound with 2 loader CPUs", "the loader used 95%")
	f(saturate.Saturation{Bracket: saturate.Bracket{Hi: 1}}, 1, "no rate held, down to 1 req/s", "raise -slo")
	f(saturate.Saturation{LoaderBound: true, LoaderCeiling: 1000, Why: "at 1000 req/s the loader used 99% of its 1 CPU"}, 1,
		"and the loader was the limit: at 1000 req/s the loader used 99%", "give it more CPUs")
}

func TestSaturateHelpNamesTheExitStatuses(t *testing.T) {
	code, _, errs := invoke(t, "saturate", "-h")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "3 no rate held over a validating run")
	assert.Contains(t, errs, "4 a lower bound: the loader could not offer more")
	assert.Contains(t, errs, "re-tested at once; a rate bounds the search only when it fails twice")
}

// -quick sets the quick lengths for every one not given.
func TestSaturateQuick(t *testing.T) {
	var o options
	var sc saturate.Config
	var so saturateOptions
	fs := saturateFlags(&o, &sc, &so, io.Discard)
	require.NoError(t, o.parse(fs, []string{"-quick", "-validate", "8s"}))
	so.settle(fs, &sc)
	q := saturate.QuickConfig()
	assert.Equal(t, q.Step, sc.Step)
	assert.Equal(t, 8*time.Second, sc.ValidateFor, "given: kept")
	assert.Equal(t, q.Precision, sc.Precision)
	assert.Equal(t, saturate.ClosedConfig{Rounds: 3, For: 2750 * time.Millisecond, Cooldown: 500 * time.Millisecond}, so.closed,
		"three closed-loop rounds of half a step, the search's cooldown after each")

	fs = saturateFlags(&o, &sc, &so, io.Discard)
	require.NoError(t, o.parse(fs, []string{"-closed-for", "2s", "-closed-rounds", "5"}))
	so.settle(fs, &sc)
	assert.Equal(t, saturate.ClosedConfig{Rounds: 5, For: 2 * time.Second, Cooldown: time.Second}, so.closed)
	assert.Equal(t, saturate.DefaultConfig().Step, sc.Step)
}

func TestSaturateRefusesBadSettings(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		code, _, errs := invoke(t, append([]string{"saturate", "-target", bare(t), "-out", filepath.Join(t.TempDir(), "x")}, args...)...)
		assert.Equal(t, 2, code, errs)
		assert.Contains(t, errs, want)
	}
	f("-validate 1s must be at least -step 11s", "-validate", "1s")
	f("-max-validations 0 must be at least 1", "-max-validations", "0")
	f("-closed-rounds -1 -closed-for 5.5s: give 0 rounds", "-closed-rounds", "-1")
	f("-anchor-share 2 must be in (0,1]", "-anchor-share", "2")
}

// saturate runs the closed loop first, anchors the search at it, reads
// the server's CPU from its /metrics around and within every step, and
// writes each step's series, the bracket and the closed loop into
// saturate.json. The canned counter never moves, so every reading is 0 %
// of 4 CPUs: whatever the machine's timing makes of the search, the
// figures are the server's. The exit status is the one the file's outcome
// calls for.
func TestSaturateReadsTheServerCPUFromMetrics(t *testing.T) {
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/metrics" {
			ctx.SetBodyString("process_cpu_seconds_total 7.5\ngo_sched_gomaxprocs_threads 4\n")
			return
		}
		bareserver.Handler(ctx)
	})
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errs := invoke(t, "saturate", "-target", url, "-conns", "2", "-q",
		"-closed-rounds", "2", "-closed-for", "100ms", "-start-rate", "100", "-max-rate", "400", "-precision", "0.5",
		"-step", "220ms", "-validate", "220ms", "-cooldown", "0s", "-max-validations", "1", "-out", dir)
	assert.Contains(t, errs, "server CPU: read from its /metrics around and within each step (4 CPUs)")
	assert.Regexp(t, `(?m)^closed loop: \d+ req/s \(median of 2 rounds, \d+–\d+\) over 2 connections; CPU per request: loader .*, server unknown`, out)
	assert.Regexp(t, `(?m)^phase .* ldr cpu +ldr/req +srv cpu +srv/req +seconds +verdict +left$`, out)
	var sat saturate.Saturation
	b, err := os.ReadFile(filepath.Join(dir, saturate.File))
	require.NoError(t, err, errs)
	require.NoError(t, json.Unmarshal(b, &sat))
	require.NotEmpty(t, sat.Steps)
	require.NotNil(t, sat.ClosedLoop)
	assert.Len(t, sat.ClosedLoop.Rounds, 2)
	assert.Equal(t, sat.ClosedLoop.Throughput, sat.Anchor, "the closed loop anchors the search")
	assert.Equal(t, 0.02, sat.Rule.IntervalS)
	for _, s := range sat.Steps {
		assert.Equal(t, 4, s.ServerCPUs)
		assert.Zero(t, s.ServerCPUShare)
		assert.GreaterOrEqual(t, s.LoaderCPUShare, 0.0)
		assert.Equal(t, 10, s.Judged)
		assert.NotEmpty(t, s.Seconds)
		assert.Regexp(t, `^(ramp|bisect|validate) +\d+ .* 0% +- +\d+/10 ok `, rowOf(out, s), "the row shows the server's 0 %% and no CPU per request")
	}
	assert.Contains(t, out, "\nbracket: ")
	sc := saturate.DefaultConfig()
	sc.Step, sc.ValidateFor = 220*time.Millisecond, 220*time.Millisecond
	assert.Equal(t, exitCode(saturateOutcome(io.Discard, &sc, &sat)), code, errs)
}

// TestSaturatePrintsTheCurve checks what saturate prints and writes, not
// where the search lands (internal/loadgen/saturate tests that): a header,
// one row per step of saturate.json with its time left, the bracket, and a
// verdict line and exit status that agree with the file whichever way a
// loaded machine made the search go.
func TestSaturatePrintsTheCurve(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errs := invoke(t, "saturate", "-target", bare(t), "-conns", "2", "-q", "-closed-rounds", "0",
		"-start-rate", "100", "-max-rate", "200", "-step", "220ms", "-validate", "330ms", "-cooldown", "10ms", "-out", dir)
	var sat saturate.Saturation
	b, err := os.ReadFile(filepath.Join(dir, saturate.File))
	require.NoError(t, err, errs)
	require.NoError(t, json.Unmarshal(b, &sat))
	require.NotEmpty(t, sat.Steps)
	assert.LessOrEqual(t, sat.Rate, 200.0)
	assert.Nil(t, sat.ClosedLoop)
	assert.NotNil(t, sat.Retests, "re-tests are listed, none or some")

	lines := strings.Split(out, "\n")
	assert.Regexp(t, `^phase +asked/s +sent/s +achieved/s +p50 +p99 .* left$`, lines[0])
	require.Greater(t, len(lines), len(sat.Steps))
	for i, step := range sat.Steps {
		assert.Regexp(t, fmt.Sprintf(`^(ramp|bisect|validate) +%.0f .* (done|≥\d\S*)$`, step.Asked), lines[1+i])
	}
	assert.Contains(t, errs, "search: ramp from 100 req/s ×2 up to 200", "the header names the search's settings")
	assert.Contains(t, errs, "rule: 20ms intervals, the first a warm-up; a step holds when 90% of the others keep corrected p99 ≤ 100ms")
	assert.NotContains(t, errs, "rate 1000 req/s", "the header leaves out -rate, which saturate does not take")
	assert.Contains(t, out, "\nbracket: ")
	switch {
	case sat.Validated:
		assert.Equal(t, 0, code, errs)
		assert.Contains(t, out, fmt.Sprintf("saturation: %.0f req/s (validated", sat.Rate))
		assert.FileExists(t, filepath.Join(dir, report.SummaryFile), "the validating run's files")
		assert.FileExists(t, filepath.Join(dir, record.CorrectedLogFile))
	case sat.Candidate > 0:
		assert.Equal(t, exitNotValidated, code, errs)
		assert.Contains(t, out, "saturation: none validated")
	default:
		assert.Equal(t, 1, code, errs)
		assert.Contains(t, errs, "no rate held")
	}
	if sat.HitMax {
		assert.Contains(t, out, "even -max-rate 200 held")
	}
}

// Validating runs that fail give exit status 3 and the remedy. The server
// fails everything after its first 25 requests: the ramp's one step (22
// requests) holds unless the machine stalls it past a 10 s SLO, and the
// validation fails twice whatever the timing.
func TestSaturateExitsThreeWhenTheValidationFails(t *testing.T) {
	var n atomic.Int64
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == api.PathEntity && n.Add(1) > 25 {
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			return
		}
		bareserver.Handler(ctx)
	})
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errs := invoke(t, "saturate", "-target", url, "-conns", "1", "-q", "-slo", "10s", "-closed-rounds", "0",
		"-start-rate", "100", "-max-rate", "100", "-step", "220ms", "-validate", "440ms", "-max-validations", "1", "-cooldown", "0s", "-out", dir)
	assert.Equal(t, exitNotValidated, code, errs)
	assert.Contains(t, out, "saturation: none validated: rates held over 220ms steps, but none over a 440ms validating run (tried at 100 req/s, each twice)")
	assert.Contains(t, errs, "no rate held over its validating run (at 100 req/s)")
	assert.Contains(t, errs, "rerun with a longer -step")
	assert.FileExists(t, filepath.Join(dir, saturate.File))
}

// rowOf is the first printed row of the curve at s's phase and rate.
func rowOf(out string, s saturate.Step) string {
	for _, line := range strings.Split(out, "\n") {
		var phase string
		var rate float64
		if n, _ := fmt.Sscan(line, &phase, &rate); n == 2 && phase == s.Phase && rate == s.Asked {
			return line
		}
	}
	return ""
}
