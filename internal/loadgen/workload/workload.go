// Package workload says which requests a load run sends: the operations
// (GET, PUT, DELETE in any mix), the ids they use (uniform or Zipf over
// 1..Keys, or a sequential range for a bulk load), and the deterministic
// values PUTs carry. A Picker draws them, one per connection, without
// locks.
package workload

import (
	"fmt"
	mrand "math/rand"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/kvpool/kvpool/internal/api"
)

// Key distributions (-dist).
const (
	DistUniform = "uniform"
	DistZipf    = "zipf"
)

// Mix is the share of each operation; the shares sum to 1.
type Mix struct {
	Get, Put, Delete float64
}

// The single-operation mixes, and their -workload names.
var (
	Get    = Mix{Get: 1}
	Put    = Mix{Put: 1}
	Delete = Mix{Delete: 1}
	single = map[string]Mix{"get": Get, "put": Put, "delete": Delete}
)

// mixSyntax is what ParseMix accepts, for its error message and -h.
const mixSyntax = "get | put | delete | mixed:R (R = read share, the rest PUTs) | get=G,put=P,delete=D (shares summing to 1)"

// Syntax is the -workload help text.
func Syntax() string { return mixSyntax }

// ParseMix parses -workload: "get", "put", "delete", "mixed:R" (a share R
// of GETs, the rest PUTs), or a general mix such as
// "get=0.8,put=0.15,delete=0.05" (operations left out have share 0; the
// shares must sum to 1).
func ParseMix(s string) (Mix, error) {
	if m, ok := single[s]; ok {
		return m, nil
	}
	bad := func(why string) (Mix, error) {
		return Mix{}, fmt.Errorf("workload %q %s; use %s", s, why, mixSyntax)
	}
	if r, ok := strings.CutPrefix(s, "mixed:"); ok {
		share, err := strconv.ParseFloat(r, 64)
		if err != nil || share < 0 || share > 1 {
			return bad("has no read share R in 0..1")
		}
		return Mix{Get: share, Put: 1 - share}, nil
	}
	if !strings.Contains(s, "=") {
		return bad("is not a known workload")
	}
	var m Mix
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		name, val, _ := strings.Cut(part, "=")
		share, err := strconv.ParseFloat(val, 64)
		if err != nil || share < 0 || share > 1 {
			return bad(fmt.Sprintf("gives %q no share in 0..1", name))
		}
		if seen[name] {
			return bad(fmt.Sprintf("names %q twice", name))
		}
		seen[name] = true
		switch name {
		case "get":
			m.Get = share
		case "put":
			m.Put = share
		case "delete":
			m.Delete = share
		default:
			return bad(fmt.Sprintf("names %q, not get, put or delete", name))
		}
	}
	if sum := m.Get + m.Put + m.Delete; sum < 1-1e-9 || sum > 1+1e-9 {
		return bad(fmt.Sprintf("has shares summing to %g, not 1", sum))
	}
	return m, nil
}

// String is the -workload spelling of m, in the shortest form that parses
// back to it.
func (m Mix) String() string {
	for name, sm := range single {
		if m == sm {
			return name
		}
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	if m.Delete == 0 {
		return "mixed:" + f(m.Get)
	}
	var parts []string
	for _, p := range []struct {
		name  string
		share float64
	}{{"get", m.Get}, {"put", m.Put}, {"delete", m.Delete}} {
		if p.share > 0 {
			parts = append(parts, p.name+"="+f(p.share))
		}
	}
	return strings.Join(parts, ",")
}

// Workload says which requests a run sends. The zero value is not valid;
// fill the fields and call Validate.
type Workload struct {
	Mix Mix
	// Keys is the number of distinct ids; requests use ids 1..Keys.
	Keys uint64
	// Dist is DistUniform or DistZipf (id 1 hottest).
	Dist string
	// ZipfS is the Zipf exponent s (> 1); larger is more skewed.
	ZipfS float64
	// ValueSize is the PUT body size in bytes (see Value).
	ValueSize int
	// Sequential, when set, ignores Mix and Dist: request seq is a PUT of
	// id First+seq. This is a bulk load's workload.
	Sequential bool
	First      uint64
}

// String is the -workload spelling of w ("fill" for a sequential load).
func (w Workload) String() string {
	if w.Sequential {
		return "fill"
	}
	return w.Mix.String()
}

// Validate reports the first setting that cannot work.
func (w Workload) Validate() error {
	m := w.Mix
	switch {
	case w.Keys == 0:
		return fmt.Errorf("-keys must be at least 1")
	case w.ValueSize < 0:
		return fmt.Errorf("-value-size %d is negative", w.ValueSize)
	case w.Sequential:
		return nil
	case m.Get < 0 || m.Put < 0 || m.Delete < 0 || m.Get+m.Put+m.Delete < 1-1e-9 || m.Get+m.Put+m.Delete > 1+1e-9:
		return fmt.Errorf("-workload shares %+v must be non-negative and sum to 1", m)
	case w.Dist == DistZipf && w.ZipfS <= 1:
		return fmt.Errorf("-zipf-s %v must be > 1", w.ZipfS)
	case w.Dist != DistUniform && w.Dist != DistZipf:
		return fmt.Errorf("-dist %q is not uniform or zipf", w.Dist)
	}
	return nil
}

// Picker draws the requests of one connection. It is not safe for
// concurrent use: each connection owns one, seeded differently, so draws
// cost no locking.
type Picker struct {
	w      Workload
	getCut float64 // draws below getCut are GETs
	putCut float64 // draws in [getCut, putCut) are PUTs, the rest DELETEs
	rng    *rand.Rand
	zipf   *mrand.Zipf
}

// NewPicker returns a Picker for w; the same seed draws the same requests.
func NewPicker(w Workload, seed uint64) *Picker {
	p := &Picker{w: w, getCut: w.Mix.Get, putCut: w.Mix.Get + w.Mix.Put,
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	if w.Dist == DistZipf && !w.Sequential {
		src := mrand.New(mrand.NewSource(int64(seed)))
		p.zipf = mrand.NewZipf(src, w.ZipfS, 1, w.Keys-1)
	}
	return p
}

// Next returns the operation and id of request seq.
func (p *Picker) Next(seq uint64) (api.Method, uint64) {
	if p.w.Sequential {
		return api.Put, p.w.First + seq
	}
	op := api.Get
	if p.getCut < 1 {
		switch x := p.rng.Float64(); {
		case x < p.getCut:
		case x < p.putCut:
			op = api.Put
		default:
			op = api.Delete
		}
	}
	if p.zipf != nil {
		return op, p.zipf.Uint64() + 1
	}
	return op, p.rng.Uint64N(p.w.Keys) + 1
}
