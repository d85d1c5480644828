package lincheck

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdict is what Check concluded.
type Verdict string

const (
	OK      Verdict = "ok"      // every history is linearizable
	Illegal Verdict = "ILLEGAL" // some history is not
	// Unknown: none was found illegal, but porcupine could not decide
	// some history within CheckOptions.Timeout. Never a pass.
	Unknown Verdict = "UNKNOWN"
)

// CheckOptions say how long a check may take and where its views go.
type CheckOptions struct {
	// Timeout bounds porcupine's search of each key's history of each
	// epoch; a history it cannot decide in time makes the verdict Unknown.
	// 0: no bound.
	Timeout time.Duration
	// HTMLPrefix names porcupine's view of an illegal history:
	// HTMLPrefix + "-epoch<N>-<key>.html", for the first maxViews of
	// them. "": none written. A view shows the history porcupine
	// searched, as compact left it: where it drew a PUT and the reads of
	// its value as one PUT, the operation's tooltip says so.
	HTMLPrefix string
}

// maxViews bounds the views one Check writes: the first illegal
// histories show what went wrong; more would only fill the disk.
const maxViews = 3

// Result is what Check found.
type Result struct {
	Verdict Verdict
	// Ops counts the operations recorded and checked, besides each
	// history's starting states; porcupine searches the fewer that
	// compact leaves, Searched.
	Ops, Searched int
	Keys          int
	// Histories is how many per-key histories were checked (keys ×
	// epochs); Illegal and Unknown count those found so.
	Histories, Illegal, Unknown int
	Views                       []string // the HTML files written
	Took                        time.Duration
}

// Check checks each key's history of each epoch for linearizability with
// porcupine, on every CPU at once, each first compacted to the operations
// that bear on its verdict (compact). An error is a view that could not be
// written; the Result is whole all the same.
func Check(histories []History, o CheckOptions) (Result, error) {
	began := time.Now()
	type job struct {
		epoch int
		key   string
		ops   []porcupine.Operation
	}
	var jobs []job
	keys := map[string]bool{}
	res := Result{}
	for _, h := range histories {
		for _, part := range partitionByKey(h.Ops) {
			key := part[0].Input.(Input).Key
			keys[key] = true
			for _, op := range part {
				if op.Input.(Input).Kind != Set {
					res.Ops++
				}
			}
			ops := denseClients(compact(part))
			res.Searched += len(ops)
			jobs = append(jobs, job{h.Epoch, key, ops})
		}
	}
	res.Keys, res.Histories = len(keys), len(jobs)

	var (
		mu   sync.Mutex
		errs []error
		next = make(chan job)
		wg   sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), max(len(jobs), 1)) {
		wg.Go(func() {
			for j := range next {
				verdict := porcupine.CheckOperationsTimeout(Model, j.ops, o.Timeout)
				mu.Lock()
				switch verdict {
				case porcupine.Illegal:
					res.Illegal++
				case porcupine.Unknown:
					res.Unknown++
				}
				view := verdict == porcupine.Illegal && o.HTMLPrefix != "" && len(res.Views) < maxViews
				path := fmt.Sprintf("%s-epoch%d-%s.html", o.HTMLPrefix, j.epoch, j.key)
				if view {
					res.Views = append(res.Views, path) // claimed now, so that no more than maxViews are written
				}
				mu.Unlock()
				if view {
					if err := visualize(j.ops, o.Timeout, path); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()

	switch {
	case res.Illegal > 0:
		res.Verdict = Illegal
	case res.Unknown > 0:
		res.Verdict = Unknown
	default:
		res.Verdict = OK
	}
	res.Took = time.Since(began)
	if len(errs) > 0 {
		return res, errs[0]
	}
	return res, nil
}

// visualize checks ops again, keeping what porcupine's view needs, and
// writes the view to path.
func visualize(ops []porcupine.Operation, timeout time.Duration, path string) error {
	_, info := porcupine.CheckOperationsVerbose(Model, ops, timeout)
	if err := porcupine.VisualizePath(Model, info, path); err != nil {
		return fmt.Errorf("lincheck: cannot write the view of an illegal history to %s: %w", path, err)
	}
	return nil
}

// denseClients returns ops with their client ids renumbered 0, 1, 2 … in
// order of first appearance: porcupine's view draws a row per id up to
// the largest.
func denseClients(ops []porcupine.Operation) []porcupine.Operation {
	ids := map[int]int{}
	out := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		n, ok := ids[op.ClientId]
		if !ok {
			n = len(ids)
			ids[op.ClientId] = n
		}
		op.ClientId = n
		out[i] = op
	}
	return out
}

// compact returns one key's history with the same verdict and fewer
// operations that porcupine may order either way, so that its search stays
// within reach when many clients use one key at once: its cost grows
// exponentially with the operations in flight together.
//
// Each value but Absent is written by one operation only (a PUT's own
// value, or the Set an epoch starts from), so in any linearization it is
// the key's value over one stretch, from its write to the next write, and
// its reads lie in that stretch: a read is legal iff its interval meets
// the stretch. Let lo be the earliest return and hi the latest call among
// a value's write and reads. The stretch begins no later than lo and ends
// no earlier than hi. So, for a value written by a PUT (Sets stay as they
// are):
//
//   - If lo < hi (a forward zone), the stretch covers [lo, hi]; of its
//     reads, the one that returns first and the one called last bound it
//     as tightly as all of them, and the others go.
//   - If hi <= lo (a backward zone), a stretch that meets every read's
//     interval can shrink to one point in [hi, lo]; the value's write and
//     reads become one PUT over [hi, lo] that no read returns.
//   - A PUT no read returns, so made or so recorded, can be placed just
//     before the next write, or after the last read of the value it
//     overwrites, unless its interval lies inside another value's forward
//     zone, whose stretch would then hold it: then it stays (the history is
//     illegal with it); otherwise it goes. A stretch of Absent begins at a
//     DELETE or at the epoch's Set (or the model's initial state) and ends
//     at the next write, but which of Absent's reads it holds is not
//     known, so a PUT also stays when some Absent operation returned before
//     it was called and some read of Absent was called after it returned
//     with no staying write (a DELETE, a Set, a PUT of a forward zone)
//     wholly and strictly between the two, which one stretch could then
//     hold (the shortest such pair: any longer one holds the same writes
//     and more). A PUT in doubt that no read returns lies inside no zone:
//     it goes.
//   - Absent holds over many stretches, and a read of it may lie in any:
//     of its reads go those whose interval holds another's (the inner
//     one's point serves both), those whose interval holds a DELETE's (or
//     a Set of Absent's: just after it, the key is absent), and those
//     called before any write but a Set of Absent (the key is absent at
//     their call).
//
// Reads of Absent are still the weak point: with many writers deleting
// one key, porcupine is left many reads of Absent and DELETEs to order,
// and may not decide in time.
//
// TestCompactKeepsTheVerdict holds compact to porcupine's verdict on the
// whole history, over many random small ones.
func compact(ops []porcupine.Operation) []porcupine.Operation {
	type cluster struct {
		write       int // the PUT or Set; -1 if none is in the history
		first, last int // the read that returns first, the one called last; -1 if none
		lo, hi      int64
	}
	clusters := map[int64]*cluster{}
	of := func(v int64) *cluster {
		c := clusters[v]
		if c == nil {
			c = &cluster{write: -1, first: -1, last: -1, lo: math.MaxInt64, hi: math.MinInt64}
			clusters[v] = c
		}
		return c
	}
	keep := make([]bool, len(ops))
	var absent []int // reads of Absent
	// Returns of Absent reads, DELETEs and Sets of Absent; and the model's
	// initial state, Absent, before everything.
	absentEnds := []int64{math.MinInt64}
	var absentCalls []int64
	var staying []int // writes that stay whatever else goes: DELETEs, Sets, PUTs of forward zones
	for i, op := range ops {
		in := op.Input.(Input)
		switch {
		case in.Kind == Get && op.Output.(Output).Value == Absent:
			absent = append(absent, i)
			absentEnds = append(absentEnds, op.Return)
			absentCalls = append(absentCalls, op.Call)
		case in.Kind == Get:
			c := of(op.Output.(Output).Value)
			if c.first < 0 || op.Return < ops[c.first].Return {
				c.first = i
			}
			if c.last < 0 || op.Call > ops[c.last].Call {
				c.last = i
			}
			c.lo, c.hi = min(c.lo, op.Return), max(c.hi, op.Call)
		case in.Kind == Delete || in.Value == Absent:
			keep[i] = true
			staying = append(staying, i)
			absentEnds = append(absentEnds, op.Return)
		default: // a PUT, or a Set of a value
			c := of(in.Value)
			c.write = i
			c.lo, c.hi = min(c.lo, op.Return), max(c.hi, op.Call)
		}
	}

	out := slices.Clone(ops)
	type zone struct{ lo, hi int64 }
	var forward []zone
	var single []int // PUTs no read returns, as recorded or made so
	for _, c := range clusters {
		switch {
		case c.write < 0: // reads of a value nobody wrote here: illegal, kept
			keep[c.first], keep[c.last] = true, true
		case c.lo < c.hi || out[c.write].Input.(Input).Kind == Set:
			keep[c.write] = true
			staying = append(staying, c.write)
			if c.first >= 0 {
				keep[c.first], keep[c.last] = true, true
			}
			if c.lo < c.hi {
				forward = append(forward, zone{c.lo, c.hi})
			}
		default:
			w := &out[c.write]
			if c.first >= 0 {
				w.Metadata = fmt.Sprintf("this PUT and every read of its value, all overlapping, drawn as one PUT from the last call to the first return among them; the PUT itself ran %d..%s",
					w.Call, describeTime(w.Return))
			}
			w.Call, w.Return = c.hi, c.lo
			single = append(single, c.write)
		}
	}

	// Absent reads by call, the later return first among equal calls; one
	// holds a later one's interval iff that one returns no later.
	slices.SortFunc(absent, func(a, b int) int {
		return cmp.Or(cmp.Compare(ops[a].Call, ops[b].Call), cmp.Compare(ops[b].Return, ops[a].Return))
	})
	minReturn := int64(math.MaxInt64)
	for k := len(absent) - 1; k >= 0; k-- {
		i := absent[k]
		keep[i] = ops[i].Return < minReturn
		minReturn = min(minReturn, ops[i].Return)
	}
	// A read of Absent whose interval holds a DELETE's, or a Set of
	// Absent's, can be placed just after it; one called before any write
	// but a Set of Absent was called, at its call.
	firstWrite, initial := int64(math.MaxInt64), true // initial: the key is Absent until firstWrite
	for _, op := range ops {
		in := op.Input.(Input)
		if in.Kind != Get && (in.Kind != Set || in.Value != Absent) && op.Call < firstWrite {
			firstWrite, initial = op.Call, in.Kind != Set
		}
	}
	for _, i := range absent {
		if keep[i] && (initial && ops[i].Call < firstWrite || slices.ContainsFunc(staying, func(j int) bool {
			return ops[j].Input.(Input).Value == Absent && ops[i].Call <= ops[j].Call && ops[j].Return <= ops[i].Return
		})) {
			keep[i] = false
		}
	}

	slices.Sort(absentEnds)
	slices.Sort(absentCalls)
	split := func(c, r int64) bool {
		return slices.ContainsFunc(staying, func(j int) bool { return c < ops[j].Call && ops[j].Return < r })
	}
	for _, i := range single {
		op := out[i]
		if op.Return == never {
			continue
		}
		held := slices.ContainsFunc(forward, func(z zone) bool { return z.lo <= op.Call && op.Return <= z.hi })
		if !held {
			// The latest Absent operation to return no later than this
			// PUT's call, the earliest Absent read called no earlier than
			// its return.
			a, _ := slices.BinarySearch(absentEnds, op.Call+1)
			b, _ := slices.BinarySearch(absentCalls, op.Return)
			held = a > 0 && b < len(absentCalls) && !split(absentEnds[a-1], absentCalls[b])
		}
		keep[i] = held
	}

	kept := out[:0]
	for i, op := range out {
		if keep[i] {
			kept = append(kept, op)
		}
	}
	return kept
}

// describeTime is a time on the runner's clock, or "never" for the return
// of a write in doubt.
func describeTime(t int64) string {
	if t == never {
		return "never"
	}
	return strconv.FormatInt(t, 10)
}
