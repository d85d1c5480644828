package loadgen

import (
	"fmt"
	mrand "math/rand"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Op is the kind of one request.
type Op uint8

// The operations of the /v0/entity API that a workload issues.
const (
	OpGet Op = iota
	OpPut
)

// Method is the HTTP method of op.
func (op Op) Method() string {
	if op == OpPut {
		return "PUT"
	}
	return "GET"
}

// Key distributions (-dist).
const (
	DistUniform = "uniform"
	DistZipf    = "zipf"
)

// Workload says which requests a run sends: the mix of GET and PUT, which
// keys (ids 1..Keys, drawn uniformly or Zipf-distributed), and how big PUT
// bodies are. The zero value is not valid; use ParseWorkload or fill the
// fields and call Validate.
type Workload struct {
	// ReadShare is the share of GETs: 1 = "get", 0 = "put", 0.9 = "mixed:0.9".
	ReadShare float64
	// Keys is the number of distinct ids; requests use ids 1..Keys.
	Keys uint64
	// Dist is DistUniform or DistZipf (id 1 hottest).
	Dist string
	// ZipfS is the Zipf exponent s (> 1); larger is more skewed.
	ZipfS float64
	// ValueSize is the PUT body size in bytes (see Value).
	ValueSize int
	// Sequential, when set, ignores ReadShare and Dist: request seq is a PUT
	// of id First+seq. This is fill's workload.
	Sequential bool
	First      uint64
}

// ParseMix parses -workload: "get", "put" or "mixed:R" with R the read share
// in [0,1], and returns the read share.
func ParseMix(s string) (float64, error) {
	switch s {
	case "get":
		return 1, nil
	case "put":
		return 0, nil
	}
	if r, ok := strings.CutPrefix(s, "mixed:"); ok {
		share, err := strconv.ParseFloat(r, 64)
		if err == nil && share >= 0 && share <= 1 {
			return share, nil
		}
	}
	return 0, fmt.Errorf("workload %q is not one of get, put, mixed:R (R = read share, 0..1, e.g. mixed:0.9)", s)
}

// String is the -workload spelling of w's mix.
func (w Workload) String() string {
	switch {
	case w.Sequential:
		return "fill"
	case w.ReadShare == 1:
		return "get"
	case w.ReadShare == 0:
		return "put"
	}
	return "mixed:" + strconv.FormatFloat(w.ReadShare, 'f', -1, 64)
}

// Validate reports the first setting that cannot work.
func (w Workload) Validate() error {
	switch {
	case w.Keys == 0:
		return fmt.Errorf("-keys must be at least 1")
	case w.ValueSize < 0:
		return fmt.Errorf("-value-size %d is negative", w.ValueSize)
	case w.ReadShare < 0 || w.ReadShare > 1:
		return fmt.Errorf("read share %v is outside [0,1]", w.ReadShare)
	case w.Sequential:
		return nil
	case w.Dist == DistZipf && w.ZipfS <= 1:
		return fmt.Errorf("-zipf-s %v must be > 1", w.ZipfS)
	case w.Dist != DistUniform && w.Dist != DistZipf:
		return fmt.Errorf("-dist %q is not uniform or zipf", w.Dist)
	}
	return nil
}

// picker draws the requests of one worker. It is not safe for concurrent
// use: each worker owns one, seeded differently, so draws cost no locking.
type picker struct {
	w    Workload
	rng  *rand.Rand
	zipf *mrand.Zipf
}

func newPicker(w Workload, seed uint64) *picker {
	p := &picker{w: w, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	if w.Dist == DistZipf && !w.Sequential {
		src := mrand.New(mrand.NewSource(int64(seed)))
		p.zipf = mrand.NewZipf(src, w.ZipfS, 1, w.Keys-1)
	}
	return p
}

// next returns the operation and id of request seq.
func (p *picker) next(seq uint64) (Op, uint64) {
	if p.w.Sequential {
		return OpPut, p.w.First + seq
	}
	op := OpPut
	if p.w.ReadShare == 1 || (p.w.ReadShare > 0 && p.rng.Float64() < p.w.ReadShare) {
		op = OpGet
	}
	if p.zipf != nil {
		return op, p.zipf.Uint64() + 1
	}
	return op, p.rng.Uint64N(p.w.Keys) + 1
}
