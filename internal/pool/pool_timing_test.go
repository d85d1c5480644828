package pool

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/alitto/pond/v2"
	"github.com/panjf2000/ants/v2"
)

// rtJob is the benchmarks' task, shaped like the HTTP handler's job: the
// submitter waits for its answer on a 1-slot channel. Each producer reuses
// one, so the benchmarks measure the pool, not the allocator.
type rtJob struct {
	done     chan struct{}
	run      func() // j.Run, bound once: handing it to ants or pond allocates nothing
	rejected bool   // written before done is sent, read after it is received
}

func newRTJob() *rtJob {
	j := &rtJob{done: make(chan struct{}, 1)}
	j.run = j.Run
	return j
}

func (j *rtJob) Run()            { j.done <- struct{}{} }
func (j *rtJob) Reject(Reason)   { j.rejected = true; j.done <- struct{}{} }
func (j *rtJob) Deadline() int64 { return 0 }

// contestant is one way of handing a job to workers: one of our variants or
// a baseline. start builds it with the given number of workers.
type contestant struct {
	name  string
	start func(b *testing.B, workers int) (submit func(*rtJob), stop func())
}

func contestants() []contestant {
	var cs []contestant
	variant := func(name, label string, exec Exec) contestant {
		return contestant{label, func(b *testing.B, workers int) (func(*rtJob), func()) {
			p, err := New(name, Config{Exec: exec, Workers: workers, Capacity: DefaultCapacity})
			if err != nil {
				b.Fatal(err)
			}
			return func(j *rtJob) { p.Submit(j) }, p.Close
		}}
	}
	// Each queueing variant twice: handing the job to a worker goroutine
	// (its name) and running it on the producer once admitted to one of
	// GOMAXPROCS slots (its name with -h).
	cs = append(cs, variant("direct", "direct", ExecWorker), variant(Auto, Auto, ExecHandler))
	for _, name := range queueingVariants {
		cs = append(cs, variant(name, name, ExecWorker))
	}
	for _, name := range queueingVariants {
		cs = append(cs, variant(name, name+"-h", ExecHandler))
	}
	return append(cs,
		// chan: the floor for a queue hand-off, a buffered channel of
		// Tasks drained by a fixed set of workers.
		contestant{"chan", func(b *testing.B, workers int) (func(*rtJob), func()) {
			ch := make(chan Task, DefaultCapacity)
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for t := range ch {
						t.Run()
					}
				})
			}
			return func(j *rtJob) { ch <- j }, func() { close(ch); wg.Wait() }
		}},
		// goroutine: no pool at all, a goroutine per job.
		contestant{"goroutine", func(b *testing.B, workers int) (func(*rtJob), func()) {
			return func(j *rtJob) { go j.run() }, func() {}
		}},
		// ants: a fixed-size pool of `workers` goroutines; Submit blocks
		// while all are busy.
		contestant{"ants", func(b *testing.B, workers int) (func(*rtJob), func()) {
			p, err := ants.NewPool(workers)
			if err != nil {
				b.Fatal(err)
			}
			submit := func(j *rtJob) {
				if err := p.Submit(j.run); err != nil {
					b.Error(err)
					j.Run()
				}
			}
			return submit, func() { _ = p.ReleaseTimeout(10 * time.Second) }
		}},
		// pond: at most `workers` goroutines over an unbounded queue.
		contestant{"pond", func(b *testing.B, workers int) (func(*rtJob), func()) {
			p := pond.NewPool(workers)
			submit := func(j *rtJob) {
				if err := p.Go(j.run); err != nil {
					b.Error(err)
					j.Run()
				}
			}
			return submit, p.StopAndWait
		}},
	)
}

// BenchmarkPool measures the submit→result round trip: each of `producers`
// goroutines submits a job and waits for its answer, as an HTTP handler
// does, b.N round trips in all, over GOMAXPROCS workers (set by -cpu). The
// queue (DefaultCapacity) never fills: a rejected job fails the benchmark.
func BenchmarkPool(b *testing.B) {
	for _, c := range contestants() {
		for _, producers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("impl=%s/producers=%d", c.name, producers), func(b *testing.B) {
				benchRoundTrip(b, c, producers)
			})
		}
	}
}

func benchRoundTrip(b *testing.B, c contestant, producers int) {
	submit, stop := c.start(b, runtime.GOMAXPROCS(0))
	defer stop()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range producers {
		n := b.N / producers
		if g < b.N%producers {
			n++
		}
		j := newRTJob()
		wg.Go(func() {
			<-start
			for range n {
				submit(j)
				<-j.done
			}
			if j.rejected {
				b.Errorf("%s rejected a job; the benchmark measures round trips of run jobs", c.name)
			}
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
}
