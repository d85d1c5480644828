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
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// The verdict line and exit status of each kind of outcome.
func TestSaturateOutcome(t *testing.T) {
	sc := saturate.DefaultConfig()
	f := func(sat saturate.Saturation, wantCode int, wantOut, wantErr string) {
		t.Helper()
		var out bytes.Buffer
		err := saturateOutcome(&out, &sc, &sat)
		code := 0
		if err != nil {
			code = 1
			var ee exitError
			if errors.As(err, &ee) {
				code = ee.code
			}
			assert.Contains(t, err.Error(), wantErr)
		}
		assert.Equal(t, wantCode, code, out.String())
		assert.Contains(t, out.String(), wantOut)
	}
	validate := func(pass, loaderBound bool) []saturate.Step {
		return []saturate.Step{{Phase: saturate.PhaseValidate, Pass: pass, LoaderBound: loaderBound, Verdict: "p99 > 100ms"}}
	}
	f(saturate.Saturation{Rate: 40_000, Validated: true, Steps: validate(true, false)}, 0,
		"saturation: 40000 req/s (validated over 30s)", "")
	f(saturate.Saturation{Rate: 40_000, Steps: validate(false, false)}, exitNotValidated,
		"saturation: 40000 req/s NOT VALIDATED", "rerun with a longer -step")
	why := "at 31000 req/s fell behind while the server used only 30% of its 16 CPUs (the loader at 7% of its 16 CPUs): the loader did not send"
	f(saturate.Saturation{Rate: 30_000, Validated: true, LoaderBound: true, LoaderCeiling: 31_000, LoaderCPUs: 16, Why: why, Steps: validate(true, false)}, exitLoaderBound,
		"saturation: ≥ 30000 req/s (validated over 30s), loader-bound with 16 loader CPUs: give it more CPUs (-cpus) or more hosts (-shard, merge)\n  "+why,
		"30000 req/s is only a lower bound: the loader could not offer more")
	// The validating run failed loader-bound: a lower bound too, not exit 3.
	f(saturate.Saturation{Rate: 30_000, LoaderBound: true, LoaderCPUs: 2, Why: "the validating run at 30000 req/s: the loader used 95% of its 2 CPUs", Steps: validate(false, true)}, exitLoaderBound,
		"saturation: ≥ 30000 req/s (not validated), loader-bound with 2 loader CPUs", "the loader used 95%")
	// A loader-bound search whose validation failed server-bound: exit 3.
	f(saturate.Saturation{Rate: 30_000, LoaderBound: true, LoaderCeiling: 31_000, Why: why, Steps: validate(false, false)}, exitNotValidated,
		"NOT VALIDATED", "the validating run at 30000 req/s failed")
	f(saturate.Saturation{}, 1, "no rate passed", "lower -start-rate")
	f(saturate.Saturation{LoaderBound: true, LoaderCeiling: 1000, Why: "at 1000 req/s the loader used 99% of its 1 CPU"}, 1,
		"and the loader was the limit: at 1000 req/s the loader used 99%", "give it more CPUs")
}

func TestSaturateHelpNamesTheLowerBoundStatus(t *testing.T) {
	code, _, errs := invoke(t, "saturate", "-h")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "3 a rate was found but the validating run at it failed")
	assert.Contains(t, errs, "4 a lower bound: the loader could not offer more")
}

// saturate reads the server's CPU from its /metrics around every step and
// puts each step's share, CPUs and CPU per request into saturate.json.
// The canned counter never moves, so every reading is 0 % of 4 CPUs:
// whatever the machine's timing makes of the search, the figures are the
// server's.
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
		"-start-rate", "100", "-max-rate", "100", "-step", "200ms", "-validate", "200ms", "-cooldown", "0s", "-out", dir)
	assert.Contains(t, errs, "server CPU: read from its /metrics around each step (4 CPUs)")
	assert.Regexp(t, `(?m)^phase .* ldr cpu +ldr/req +srv cpu +srv/req +verdict +left$`, out)
	var sat saturate.Saturation
	b, err := os.ReadFile(filepath.Join(dir, SaturateFile))
	require.NoError(t, err, errs)
	require.NoError(t, json.Unmarshal(b, &sat))
	require.NotEmpty(t, sat.Steps)
	for _, s := range sat.Steps {
		assert.Equal(t, 4, s.ServerCPUs)
		assert.Zero(t, s.ServerCPUShare)
		assert.GreaterOrEqual(t, s.LoaderCPUShare, 0.0)
		assert.Regexp(t, `^(ramp|bisect|validate) +\d+ .* 0% +- `, rowOf(out, s), "the row shows the server's 0 %% and no CPU per request")
	}
	// The exit status is the one the file's outcome calls for.
	sc := saturate.DefaultConfig()
	sc.StartRate, sc.ValidateFor, sc.Step = 100, 200*time.Millisecond, 200*time.Millisecond
	want := 0
	if err := saturateOutcome(io.Discard, &sc, &sat); err != nil {
		want = 1
		var ee exitError
		if errors.As(err, &ee) {
			want = ee.code
		}
	}
	assert.Equal(t, want, code, errs)
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
