package loadgen

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
)

// runVegeta is the "vegeta" engine: vegeta's attacker (net/http client,
// its own pacer and worker pool) with a Targeter that draws requests from
// the same Workload. It is the independent loader the fast engine is
// checked against. Vegeta measures latency from its actual send; the
// corrected latency is taken from the schedule start + seq/rate as in the
// fast engine. Vegeta does not report how many workers it grew to, so
// Result.ConnsPeak is the starting count.
func runVegeta(ctx context.Context, cfg *Config, t target, progress func(Progress)) (*Result, error) {
	conn, err := net.DialTimeout("tcp", t.host, cfg.Timeout)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w; is the server running (make run)?", t.host, err)
	}
	conn.Close()

	var mu sync.Mutex // the Targeter is called from many workers
	pick := newPicker(cfg.Workload, cfg.Seed)
	var seq uint64
	targeter := func(tgt *vegeta.Target) error {
		mu.Lock()
		op, key := pick.next(seq)
		seq++
		mu.Unlock()
		tgt.Method = op.Method()
		tgt.URL = t.url(key)
		tgt.Body = nil
		if op == OpPut {
			tgt.Body = Value(key, cfg.Workload.ValueSize)
		}
		return nil
	}

	maxWorkers := uint64(cfg.MaxConns)
	pacer := vegeta.ConstantPacer{} // Freq 0: as fast as MaxWorkers allow
	var sched schedule
	if cfg.Rate > 0 {
		pacer = vegeta.ConstantPacer{Freq: int(math.Round(cfg.Rate * 1000)), Per: 1000 * time.Second}
		sched = newSchedule(cfg.Rate)
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

	rec := newRecorder(cfg.KeepResults)
	done := make(chan struct{})
	var bg sync.WaitGroup
	cpu0 := processCPU()
	start := time.Now()
	if progress != nil && cfg.Progress > 0 {
		snapshot := func() Progress {
			p := Progress{Elapsed: time.Since(start), Asked: cfg.Rate, Conns: cfg.Conns, Errors: rec.errCount.Load()}
			rec.live.AddTo(&p.live)
			return p
		}
		bg.Go(func() { reportProgress(done, cfg.Progress, snapshot, progress) })
	}
	var n uint64
	for r := range atk.Attack(targeter, pacer, cfg.Duration, cfg.Name) {
		o := outcome{seq: r.Seq, key: keyOf(r.URL), op: OpGet, code: int(r.Code),
			bytesIn: int(r.BytesIn), bytesOut: int(r.BytesOut)}
		if r.Method == "PUT" {
			o.op = OpPut
		}
		o.sent = int64(r.Timestamp.Sub(start))
		o.end = o.sent + int64(r.Latency)
		o.intended = o.sent
		if cfg.Rate > 0 {
			o.intended = min(sched.At(r.Seq), o.sent)
		}
		if r.Code == 0 && r.Error != "" {
			o.err = errors.New(r.Error)
		}
		rec.add(&o)
		if n++; cfg.Requests > 0 && n >= cfg.Requests {
			atk.Stop()
		}
	}
	cpu := processCPU().Sub(cpu0)
	close(done)
	bg.Wait()

	res := &Result{Config: *cfg, Start: start, CPU: cpu, ConnsStart: cfg.Conns, ConnsPeak: cfg.Conns}
	if cfg.Rate > 0 {
		res.Planned = sched.Count(cfg.Duration)
	}
	res.merge([]*recorder{rec})
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
