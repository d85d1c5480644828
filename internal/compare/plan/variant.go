package plan

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// The names kvserver accepts for -pool, -overflow, -exec and -limit.
// They are repeated here rather than imported because the load side
// talks to kvserver as a user would, over HTTP and as a process (it never
// imports the server's packages); kvserver itself refuses a name it does
// not know. Limits are the adaptive algorithms (fixed, kvserver's
// default, is every other variant).
var (
	Pools = []string{"direct", "fifo", "lifo", "msqueue", "multiqueue", "adaptive"}
	// AutoPool is kvserver's default pool, admission that needs no
	// tuning: -pools may name it beside the lab's subjects (Pools), which
	// the presets run unless told otherwise.
	AutoPool = "auto"
	// Peers are failsafe-go's adaptive limiter behind kvserver's pool
	// interface (-pool failsafe), and the same built with its
	// prioritizer, marked retries asking at a lower priority
	// (failsafe-priority): the Go library a developer would reach for,
	// measured beside the default in the same runs.
	Peers    = []string{PeerPool, PeerPriorityPool}
	Policies = []string{"reject", "drop-oldest", "caller-runs", "block"}
	Execs    = []string{"handler", "worker"}
	Limits   = []string{"gradient2", "vegas", "aimd"}
	Presets  = []string{"queues", "capacity", "policies", "slow-backend", "overload", "scaling", "metastable", "writes"}
)

// Baseline is the pool every other is compared against: no pool at all,
// the store call runs in the connection's handler.
const Baseline = "direct"

// PeerPool and PeerPriorityPool are the peers' -pool names (Peers).
const (
	PeerPool         = "failsafe"
	PeerPriorityPool = "failsafe-priority"
)

// Default as a Variant's Pool is kvserver with no pool flag at all: what
// a user who gives none runs (the metastable preset's "default").
const Default = "default"

// unboundedPools are the pools the overload preset also runs with -cap -1,
// as loadtest/overload.sh did: the named exception whose queue may grow.
var unboundedPools = []string{"msqueue"}

// limitPools are the pools the adaptive-limit variants run on.
var limitPools = []string{"fifo", "lifo"}

// seedsCap is the queue bound of the policy variants: with kvserver's
// default -cap (auto: -max-conns, one place per connection) a queue never
// fills and an overflow policy never applies, so the seeds' experiments
// name their bound, with -queue-timeout 0 (no shedding by age), as
// kvserver's defaults were when the seeds ran.
const seedsCap = 1024

// Variant is one kvserver configuration under comparison.
type Variant struct {
	Pool   string
	Policy string // "" = kvserver's default
	// Cap is passed as -cap when CapSet; -1 is unbounded.
	Cap    int
	CapSet bool
	// QueueTimeout is passed as -queue-timeout when QueueTimeoutSet (the
	// policy variants: 0, none).
	QueueTimeout    time.Duration
	QueueTimeoutSet bool
	// Workers is passed as -workers when > 0.
	Workers int
	// Exec is passed as -exec when set: "handler" or "worker".
	Exec string
	// Limit is passed as -limit when set: an adaptive algorithm.
	Limit string
	// CPUs (scaling preset), when > 0, starts kvserver on the first CPUs
	// of its set, this many.
	CPUs        int
	IODelay     time.Duration
	IODelayDist string
	// IOConcurrency is passed as -io-concurrency when > 0: how many
	// delayed store operations run at once (the metastable preset's
	// store of finite capacity).
	IOConcurrency int `json:",omitempty"`
}

// Name is how tables and charts label v: "lifo", "fifo/drop-oldest",
// "fifo cap=64", "lifo workers=8", "msqueue unbounded", "lifo/reject
// cap=1024", "lifo exec=worker", "fifo limit=vegas", "lifo cpus=4". The
// policy variants' -queue-timeout 0 is not in the name: the preset's text
// and the settings line say it.
func (v Variant) Name() string {
	return v.Pool + strings.Join(setOnly(
		option{v.Policy != "", []string{"/" + v.Policy}},
		option{v.CapSet && v.Cap < 0, []string{" unbounded"}},
		option{v.CapSet && v.Cap >= 0, []string{" cap=" + strconv.Itoa(v.Cap)}},
		option{v.Workers > 0, []string{" workers=" + strconv.Itoa(v.Workers)}},
		option{v.Exec != "", []string{" exec=" + v.Exec}},
		option{v.Limit != "", []string{" limit=" + v.Limit}},
		option{v.CPUs > 0, []string{" cpus=" + strconv.Itoa(v.CPUs)}},
		option{v.QueueTimeoutSet && v.Policy == "" && !v.CapSet, []string{" queue-timeout=" + v.QueueTimeout.String()}},
	), "")
}

// option is a part of a variant's name or flags, and whether the variant
// has it.
type option struct {
	set  bool
	text []string
}

// setOnly is the texts of the options that are set, in order.
func setOnly(options ...option) []string {
	var out []string
	for _, o := range options {
		if o.set {
			out = append(out, o.text...)
		}
	}
	return out
}

// Slug makes a workload name safe for a file or folder name (the
// runner's folder per workload, the report's charts).
func Slug(s string) string { return strings.NewReplacer(":", "", "/", "-", " ", "-").Replace(s) }

// Slug is Name made safe for a folder name.
func (v Variant) Slug() string {
	return strings.NewReplacer("/", "-", " ", "-", "=", "").Replace(v.Name())
}

// PolicyLabel is the policy column of a table.
func (v Variant) PolicyLabel() string {
	switch {
	case v.Pool == Baseline:
		return "-"
	case v.CapSet && v.Cap < 0:
		return "unbounded"
	case v.Policy == "":
		return "default"
	}
	return v.Policy
}

// Args are v's kvserver flags.
func (v Variant) Args() []string {
	return setOnly(
		option{v.Pool != Default, []string{"-pool", v.Pool}},
		option{v.Policy != "", []string{"-overflow", v.Policy}},
		option{v.CapSet, []string{"-cap", strconv.Itoa(v.Cap)}},
		option{v.QueueTimeoutSet, []string{"-queue-timeout", v.QueueTimeout.String()}},
		option{v.Workers > 0, []string{"-workers", strconv.Itoa(v.Workers)}},
		option{v.Exec != "", []string{"-exec", v.Exec}},
		option{v.Limit != "", []string{"-limit", v.Limit}},
		option{v.IODelay > 0, []string{"-io-delay", v.IODelay.String()}},
		option{v.IODelay > 0 && v.IODelayDist != "", []string{"-io-delay-dist", v.IODelayDist}},
		option{v.IOConcurrency > 0, []string{"-io-concurrency", strconv.Itoa(v.IOConcurrency)}},
	)
}

// IsBaseline tells whether v is the direct pool every ratio refers to.
func (v Variant) IsBaseline() bool { return v.Pool == Baseline }

// IsPeer tells whether v is one of the peers (Peers): failsafe-go's
// limiter, which sets its own limit and queue.
func (v Variant) IsPeer() bool { return slices.Contains(Peers, v.Pool) }

// AtDefaults tells whether v is one of kvserver's own queueing pools at
// kvserver's default configuration (not a peer): no -cap, -overflow,
// -queue-timeout, -workers or -limit flag, and the default -exec
// (handler): what the defaults' targets under overload judge
// (docs/load-lab.md, "Reading a report").
func (v Variant) AtDefaults() bool {
	return !v.IsBaseline() && !v.IsPeer() && v.Policy == "" && !v.CapSet && !v.QueueTimeoutSet && v.Workers == 0 &&
		v.Limit == "" && (v.Exec == "" || v.Exec == "handler")
}

// WithoutCPUs is v run on its whole set: the scaling tables' row label.
func (v Variant) WithoutCPUs() Variant { v.CPUs = 0; return v }

// PoolLabel is the pool column of a table: the pool with its swept
// parameter, without the policy (a column of its own) or "unbounded"
// (the policy column says it).
func (v Variant) PoolLabel() string {
	v.Policy = ""
	if v.CapSet && v.Cap < 0 {
		v.CapSet = false
	}
	return v.Name()
}
