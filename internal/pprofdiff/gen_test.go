package pprofdiff

import (
	"crypto/sha256"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// regenerate asks TestRegenerateProfiles to write the profiles of
// testdata/pprof again:
//
//	go test ./internal/pprofdiff -run TestRegenerateProfiles -regenerate
var regenerate = flag.Bool("regenerate", false, "write testdata/pprof's profiles again (TestRegenerateProfiles)")

// genVariantEnv names, in the environment of the test process that
// TestRegenerateProfiles starts per variant, the variant it profiles.
const genVariantEnv = "PPROFDIFF_GEN_VARIANT"

// genSeconds is how long each variant runs: about 100 CPU samples a
// second per busy core, few enough to keep the files small.
const genSeconds = 1

// TestRegenerateProfiles writes the profiles top_test.go diffs:
// cpu_<variant>.pb.gz and mutex_<variant>.pb.gz for a "direct" and a
// "pool" run of one small workload. Both hash, sort and count under a
// lock; pool also hands every request to a worker over a channel and
// takes a second lock, so the diff has rows that grow, rows that shrink
// and inlined frames. Each variant runs in a process of its own (this
// test binary again), since a mutex profile counts from the process's
// start.
func TestRegenerateProfiles(t *testing.T) {
	if v := os.Getenv(genVariantEnv); v != "" {
		writeProfiles(t, v)
		return
	}
	if !*regenerate {
		t.Skip("writes testdata/pprof's profiles again only with -regenerate")
	}
	for _, v := range []string{"direct", "pool"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRegenerateProfiles$")
		cmd.Env = append(os.Environ(), genVariantEnv+"="+v)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "variant %s: %s", v, out)
	}
}

// writeProfiles runs variant's workload under the CPU profiler, then
// writes the process's mutex profile.
func writeProfiles(t *testing.T, variant string) {
	runtime.SetMutexProfileFraction(1)
	cpu, err := os.Create(filepath.Join(pprofTestdata, "cpu_"+variant+".pb.gz"))
	require.NoError(t, err)
	require.NoError(t, pprof.StartCPUProfile(cpu))
	work(variant == "pool", time.Now().Add(genSeconds*time.Second))
	pprof.StopCPUProfile()
	require.NoError(t, cpu.Close())
	mutex, err := os.Create(filepath.Join(pprofTestdata, "mutex_"+variant+".pb.gz"))
	require.NoError(t, err)
	require.NoError(t, pprof.Lookup("mutex").WriteTo(mutex, 0))
	require.NoError(t, mutex.Close())
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
