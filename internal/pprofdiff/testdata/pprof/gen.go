//go:build ignore

// gen writes the profiles top_test.go diffs: cpu_<variant>.pb.gz and
// mutex_<variant>.pb.gz for a "direct" and a "pool" run of one small
// workload. Both hash, sort and count under a lock; pool also hands every
// request to a worker over a channel and takes a second lock, so the diff
// has rows that grow, rows that shrink and inlined frames. Run it in this
// folder:
//
//	go run gen.go
//
// Each variant runs in its own process, since a mutex profile counts from
// the process's start.
package main

import (
	"crypto/sha256"
	"flag"
	"log"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"time"
)

// seconds is how long each variant runs: about 100 CPU samples a second
// per busy core, few enough to keep the files small.
const seconds = 1

func main() {
	variant := flag.String("variant", "", "run one variant (direct or pool); without it, run each in a process of its own")
	flag.Parse()
	if *variant == "" {
		for _, v := range []string{"direct", "pool"} {
			cmd := exec.Command(os.Args[0], "-variant", v)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			if err := cmd.Run(); err != nil {
				log.Fatalf("variant %s: %v", v, err)
			}
		}
		return
	}
	runtime.SetMutexProfileFraction(1)
	cpu, err := os.Create("cpu_" + *variant + ".pb.gz")
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		log.Fatal(err)
	}
	work(*variant == "pool", time.Now().Add(seconds*time.Second))
	pprof.StopCPUProfile()
	if err := cpu.Close(); err != nil {
		log.Fatal(err)
	}
	mutex, err := os.Create("mutex_" + *variant + ".pb.gz")
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.Lookup("mutex").WriteTo(mutex, 0); err != nil {
		log.Fatal(err)
	}
	if err := mutex.Close(); err != nil {
		log.Fatal(err)
	}
}

type stats struct {
	mu sync.Mutex
	n  map[byte]int
}

type queue struct {
	mu    sync.Mutex
	items [][]byte
}

// work serves requests on four goroutines until deadline; with pool each
// request goes through a channel to one of two workers first.
func work(pool bool, deadline time.Time) {
	st := &stats{n: map[byte]int{}}
	q := &queue{}
	reqs := make(chan []byte)
	var workers sync.WaitGroup
	if pool {
		for range 2 {
			workers.Go(func() {
				for b := range reqs {
					serve(b, st, q)
				}
			})
		}
	}
	var clients sync.WaitGroup
	for c := range 4 {
		clients.Go(func() {
			b := make([]byte, 4096)
			for i := 0; time.Now().Before(deadline); i++ {
				b[0] = byte(c + i)
				if pool {
					reqs <- slices.Clone(b)
				} else {
					serve(b, st, nil)
				}
			}
		})
	}
	clients.Wait()
	close(reqs)
	workers.Wait()
}

func serve(b []byte, st *stats, q *queue) {
	sum := sha256.Sum256(b)
	xs := make([]uint64, 256)
	x := uint64(sum[0])
	for i := range xs {
		x = step(x)
		xs[i] = x
	}
	slices.Sort(xs)
	st.mu.Lock()
	st.n[sum[1]]++
	for range 200 {
		x = step(x)
	}
	st.mu.Unlock()
	if q != nil {
		q.push(b)
	}
}

// step is small enough to be inlined: its samples show as inlined frames.
func step(x uint64) uint64 { return x*6364136223846793005 + 1442695040888963407 }

func (q *queue) push(b []byte) {
	q.mu.Lock()
	q.items = append(q.items, b)
	if len(q.items) > 64 {
		q.items = q.items[:0]
	}
	q.mu.Unlock()
}
