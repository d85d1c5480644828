// Package vegeta is the "vegeta" engine of the load lab: vegeta's attacker
// (net/http client, its own pacer and worker pool) with a Targeter that
// draws requests from the same workload as the fast engine. It is the
// independent loader the fast engine is checked against. Import it for its
// side effect (it registers itself with package engine) to make -engine
// vegeta available.
package vegeta

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

func init() { engine.Register(config.EngineVegeta, run) }

// run is the engine. Vegeta measures latency from its actual send; the
// corrected latency is taken from the schedule start + seq/rate as in the
// fast engine. Vegeta does not report how many workers it grew to, so
// Result.ConnsPeak is the starting count.
func run(ctx context.Context, cfg *config.Config, t config.Target, progress func(record.Progress)) (*record.Result, error) {
	conn, err := net.DialTimeout("tcp", t.Host, cfg.Timeout)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w; is the server running (make run)?", t.Host, err)
	}
	conn.Close()

	var mu sync.Mutex // the Targeter is called from many workers
	pick := workload.NewPicker(cfg.Workload, cfg.Seed)
	var seq uint64
	targeter := func(tgt *vegeta.Target) error {
		mu.Lock()
		op, key := pick.Next(seq)
		seq++
		mu.Unlock()
		tgt.Method = op.String()
		tgt.URL = t.URL(key)
		tgt.Body = nil
		if op == api.Put {
			tgt.Body = workload.Value(key, cfg.Workload.ValueSize)
		}
		return nil
	}

	maxWorkers := uint64(cfg.MaxConns)
	pacer := vegeta.ConstantPacer{} // Freq 0: as fast as MaxWorkers allow
	var sched schedule.Schedule
	if cfg.Rate > 0 {
		pacer = vegeta.ConstantPacer{Freq: int(math.Round(cfg.Rate * 1000)), Per: 1000 * time.Second}
		sched = schedule.New(cfg.Rate)
	} else {
		maxWorkers = uint64(cfg.Conns)
	}
	atk := vegeta.NewAttacker(
		vegeta.Workers(uint64(cfg.Conns)),
		vegeta.MaxWorkers(maxWorkers),
		vegeta.Connections(cfg.MaxConns),
		vegeta.MaxConnections(cfg.MaxConns),
		vegeta.Timeout(cfg.Timeout),
		vegeta.KeepAlive(true),
	)
	stopOnCancel := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stopOnCancel()

	col := record.NewCollector(cfg)
	rec := col.NewRecorder()
	cpu0 := record.ProcessCPU()
	start := time.Now()
	col.Started(start)
	stopProgress := record.ReportProgress(cfg.Progress, func() record.Progress {
		p := record.Progress{Elapsed: time.Since(start), Asked: cfg.Rate, Conns: cfg.Conns}
		rec.AddTo(&p)
		return p
	}, progress)
	var n uint64
	for r := range atk.Attack(targeter, pacer, cfg.Duration, cfg.Name) {
		o := record.Outcome{Seq: r.Seq, Key: keyOf(r.URL), Op: api.ParseMethod([]byte(r.Method)), Code: int(r.Code),
			BytesIn: int(r.BytesIn), BytesOut: int(r.BytesOut)}
		o.Sent = int64(r.Timestamp.Sub(start))
		o.End = o.Sent + int64(r.Latency)
		o.Intended = o.Sent
		if cfg.Rate > 0 {
			o.Intended = min(sched.At(r.Seq), o.Sent)
		}
		if r.Code == 0 && r.Error != "" {
			o.Err = errors.New(r.Error)
		}
		rec.Add(&o)
		if n++; cfg.Requests > 0 && n >= cfg.Requests {
			atk.Stop()
		}
	}
	cpu := record.ProcessCPU().Sub(cpu0)
	stopProgress()

	res := &record.Result{Config: *cfg, Start: start, CPU: cpu, ConnsStart: cfg.Conns, ConnsPeak: cfg.Conns}
	if cfg.Rate > 0 {
		res.Planned = sched.Count(cfg.Duration)
	}
	col.Finish(res)
	return res, nil
}

// keyOf extracts the id from a request URL ending in "?id=K".
func keyOf(url string) uint64 {
	i := strings.LastIndex(url, "id=")
	if i < 0 {
		return 0
	}
	k, _ := strconv.ParseUint(url[i+3:], 10, 64)
	return k
}
