package lincheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/mono"
)

// Workload is what a Runner's clients do.
type Workload struct {
	Keys      int // hot keys, lincheck-key-0 .. Keys-1, each op picks one at random
	Readers   int // clients that only GET
	Writers   int // clients that only PUT and DELETE
	ValueSize int // bytes per PUT (at least one copy of the value's name)
	// DeleteOneIn makes one write in DeleteOneIn a DELETE (0: none).
	DeleteOneIn int
	// Timeout bounds each request; a write that outlasts it is in doubt.
	Timeout time.Duration
	Seed    uint64 // the clients' random choices
}

func (w Workload) validate() error {
	switch {
	case w.Keys <= 0:
		return errors.New("lincheck: Workload.Keys must be positive")
	case w.Readers < 0 || w.Writers <= 0:
		return errors.New("lincheck: Workload needs a writer, and no negative count of readers")
	case w.ValueSize < 0 || w.DeleteOneIn < 0 || w.Timeout <= 0:
		return errors.New("lincheck: Workload.ValueSize and DeleteOneIn must not be negative, Timeout must be positive")
	}
	return nil
}

// History is one epoch's operations, ready for Check: a Set per key with
// the state the epoch starts from, then what the clients did, then the
// epoch's closing read of each key.
type History struct {
	Epoch int
	Ops   []porcupine.Operation
}

// Stats counts what a Runner's clients saw.
type Stats struct {
	Reads, Writes int // answered: 200 or 404, 201 or 202
	// InDoubt are writes that got no answer, or one other than 201/202
	// (a 503, a 500): recorded as never returning.
	InDoubt int
	// DroppedReads are reads that got no answer or one other than 200 or
	// 404: not recorded.
	DroppedReads int
	// Unanswered are the requests among those two that got no answer at
	// all (the server gone, the timeout passed); the others got a status
	// the API does not promise for them, such as a 503.
	Unanswered int
	Corrupt    int // reads whose body was no value a PUT wrote
}

// never is the return time of a write in doubt: after every other.
const never = math.MaxInt64

// Runner drives a Workload against a kvserver in epochs and records each
// epoch's history. An epoch ends with every client stopped and a read of
// each key with nothing else in flight (Close), so that one epoch's
// history can be checked apart from the others, starting from what that
// read found: a history of a whole run would be too long to check. Writes
// in doubt may still be applied later, so they are carried into every
// later epoch's history as never returning, until a read shows their
// value (they were applied) or the server is restarted (they never will
// be). Check leaves a PUT in doubt out of a history in which no read
// returned its value: it could be linearized last.
//
// A Runner's methods are called from one goroutine, in turn: Epoch, then
// Close, then Epoch again.
type Runner struct {
	w      Workload
	client *http.Client
	values atomic.Int64 // the last PUT's number

	nextClient atomic.Uint64    // porcupine client ids: one per client per epoch, and one more after each write in doubt
	state      map[string]int64 // each key's value at the last Close
	carried    []porcupine.Operation
	epoch      []porcupine.Operation // the current epoch's, from Epoch to Close
	epochStart int64
	histories  []History
	stats      Stats
}

// NewRunner returns a Runner of w whose keys start absent (a fresh store).
func NewRunner(w Workload) (*Runner, error) {
	if err := w.validate(); err != nil {
		return nil, err
	}
	r := &Runner{
		w: w,
		client: &http.Client{Timeout: w.Timeout, Transport: &http.Transport{
			MaxIdleConnsPerHost: w.Readers + w.Writers + 1, DisableCompression: true,
		}},
		state: map[string]int64{},
	}
	for k := range w.Keys {
		r.state[keyName(k)] = Absent
	}
	return r, nil
}

func keyName(k int) string { return "lincheck-key-" + strconv.Itoa(k) }

// Histories are the epochs closed so far.
func (r *Runner) Histories() []History { return r.histories }

// Stats are the counts so far.
func (r *Runner) Stats() Stats { return r.stats }

// Epoch runs the clients against base (http://host:port) until they have
// started ops operations between them. A client stops early at its first
// request that gets no answer (the server may be gone); one whose write
// is in doubt goes on under a new client id, its write never returning.
// midway, if not nil, is called once, by the client that starts
// operation ops/2, before it sends it: a fault in the middle of the
// epoch, such as kill -9. Epoch returns once every client has stopped;
// Close must follow.
func (r *Runner) Epoch(ctx context.Context, base string, ops int, midway func()) {
	r.epochStart = mono.Now()
	var issued atomic.Int64
	clients := r.w.Readers + r.w.Writers
	recorded := make([][]porcupine.Operation, clients)
	stats := make([]Stats, clients)
	var wg sync.WaitGroup
	for c := range clients {
		rng := rand.New(rand.NewPCG(r.w.Seed, uint64(len(r.histories))<<32|uint64(c)))
		wg.Go(func() {
			id := r.newClient()
			for ctx.Err() == nil {
				n := issued.Add(1)
				if n > int64(ops) {
					return
				}
				if n == int64(ops/2) && midway != nil {
					midway()
				}
				op, o := r.do(ctx, base, c < r.w.Writers, rng, &stats[c])
				if o == answered || op.Return == never { // a read not answered is dropped
					op.ClientId = id
					recorded[c] = append(recorded[c], op)
				}
				switch {
				case o == unanswered:
					return
				case o == inDoubt:
					id = r.newClient()
				}
			}
		})
	}
	wg.Wait()
	for c := range clients {
		r.epoch = append(r.epoch, recorded[c]...)
		r.stats.add(stats[c])
	}
}

// newClient is a porcupine client id no operation has had.
func (r *Runner) newClient() int { return int(r.nextClient.Add(1) - 1) }

// outcome is what became of a request.
type outcome uint8

const (
	answered   outcome = iota // as the API promises: recorded
	inDoubt                   // a write answered otherwise: recorded as never returning
	dropped                   // a read answered otherwise: not recorded
	unanswered                // no answer: a write in doubt or a read dropped; the client stops
)

// do sends one operation: a PUT or DELETE for a writer, a GET for a
// reader, and returns it as recorded and what became of it.
func (r *Runner) do(ctx context.Context, base string, writer bool, rng *rand.Rand, st *Stats) (porcupine.Operation, outcome) {
	key := keyName(rng.IntN(r.w.Keys))
	in := Input{Kind: Get, Key: key}
	if writer {
		in.Kind = Put
		if r.w.DeleteOneIn > 0 && rng.IntN(r.w.DeleteOneIn) == 0 {
			in.Kind = Delete
		} else {
			in.Value = r.values.Add(1)
		}
	}
	call := mono.Now()
	code, body, err := r.send(ctx, base, in)
	ret := mono.Now()
	op := porcupine.Operation{Input: in, Call: call, Return: ret, Output: Output{}}
	failed := inDoubt
	if err != nil {
		failed = unanswered
		st.Unanswered++
	}
	if in.Kind == Get {
		switch {
		case err == nil && code == http.StatusOK:
			op.Output = Output{Value: r.read(body, st)}
		case err == nil && code == http.StatusNotFound:
			op.Output = Output{Value: Absent}
		default:
			st.DroppedReads++
			if failed == inDoubt {
				failed = dropped
			}
			return op, failed
		}
		st.Reads++
		return op, answered
	}
	if err == nil && (code == http.StatusCreated || code == http.StatusAccepted) {
		st.Writes++
		return op, answered
	}
	st.InDoubt++
	op.Return = never
	return op, failed
}

// read is the value a 200's body holds, counting a corrupt one.
func (r *Runner) read(body []byte, st *Stats) int64 {
	v := valueID(body, r.w.ValueSize)
	if v == Corrupt {
		st.Corrupt++
	}
	return v
}

// send makes one request and reads its whole answer.
func (r *Runner) send(ctx context.Context, base string, in Input) (int, []byte, error) {
	method, body := http.MethodGet, io.Reader(nil)
	switch in.Kind {
	case Put:
		method, body = http.MethodPut, bytes.NewReader(valueOf(in.Value, r.w.ValueSize))
	case Delete:
		method = http.MethodDelete
	}
	req, err := http.NewRequestWithContext(ctx, method, base+api.PathEntity+"?id="+url.QueryEscape(in.Key), body)
	if err != nil {
		return 0, nil, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// closeAttempts bounds Close's tries at each key's read.
const closeAttempts = 20

// Close ends the epoch: it reads each key from base with nothing else in
// flight, one after the other, and records the epoch's history. restarted
// says the server was killed and started again since the epoch began: a
// write in doubt then either was applied before the kill or never will
// be, and none is carried further.
func (r *Runner) Close(ctx context.Context, base string, restarted bool) error {
	id := r.newClient()
	final := map[string]int64{}
	for k := range r.w.Keys {
		key := keyName(k)
		var last error
		for range closeAttempts {
			call := mono.Now()
			code, body, err := r.send(ctx, base, Input{Kind: Get, Key: key})
			ret := mono.Now()
			v := Absent
			switch {
			case err == nil && code == http.StatusOK:
				v = r.read(body, &r.stats)
			case err == nil && code == http.StatusNotFound:
			case err != nil:
				last = err
				continue
			default:
				last = fmt.Errorf("answered %d %q", code, body)
				continue
			}
			r.stats.Reads++
			final[key] = v
			r.epoch = append(r.epoch, porcupine.Operation{
				ClientId: id, Input: Input{Kind: Get, Key: key}, Call: call, Output: Output{Value: v}, Return: ret,
			})
			last = nil
			break
		}
		if last != nil {
			return fmt.Errorf("lincheck: cannot read %s to close epoch %d after %d tries: %w", key, len(r.histories), closeAttempts, last)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}

	h := History{Epoch: len(r.histories)}
	for k := range r.w.Keys {
		key := keyName(k)
		h.Ops = append(h.Ops, porcupine.Operation{
			ClientId: id, Input: Input{Kind: Set, Key: key, Value: r.state[key]}, Call: r.epochStart - 1, Output: Output{}, Return: r.epochStart - 1,
		})
	}
	for _, op := range r.carried {
		op.Call = r.epochStart
		r.epoch = append(r.epoch, op)
	}
	// A write in doubt whose value a read returned was applied; any other
	// may yet be, unless the server was restarted since it was sent.
	observed := map[int64]bool{}
	for _, op := range r.epoch {
		if op.Input.(Input).Kind == Get {
			observed[op.Output.(Output).Value] = true
		}
	}
	var carry []porcupine.Operation
	for _, op := range r.epoch {
		h.Ops = append(h.Ops, op)
		if in := op.Input.(Input); op.Return == never && !restarted && (in.Kind == Delete || !observed[in.Value]) {
			carry = append(carry, op)
		}
	}
	r.histories = append(r.histories, h)
	r.carried, r.epoch, r.state = carry, nil, final
	return nil
}

func (s *Stats) add(o Stats) {
	s.Reads += o.Reads
	s.Writes += o.Writes
	s.InDoubt += o.InDoubt
	s.DroppedReads += o.DroppedReads
	s.Unanswered += o.Unanswered
	s.Corrupt += o.Corrupt
}
