package client

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Flags is what the client flags fill before Model makes them a Model:
// -clients names a population, and each other client flag given (on the
// command line or from the environment) overrides that one field of it,
// whatever the order. One set of flags for every command that takes
// clients (loadtest attack, saturate, and compare's metastable preset).
type Flags struct {
	name string // -clients
	m    Model  // the individual flags' values; only those given count
}

// Add defines the client flags on fs.
func (f *Flags) Add(fs *flag.FlagSet) { add(fs, &f.name, &f.m) }

// add defines the client flags on fs over *name and m's fields.
func add(fs *flag.FlagSet, name *string, m *Model) {
	fs.StringVar(name, "clients", "", "a named client `population`: "+strings.Join(Names(), " | ")+
		" (none: the classic client, no timeout of its own, no retries; untuned: a hand-written retry loop, -client-timeout 500ms -retries 5 -retry-on 503,timeout, no backoff; "+
		"retry: -client-timeout 1s -retries 2 -retry-on 503,timeout -mark-retries; "+
		"backoff: retry with -backoff exp -backoff-base 10ms -backoff-cap 1s -retry-after; budget: backoff with -retry-budget 0.2; "+
		"throttle: backoff with -throttle 2); each other client flag given overrides that setting of it (default none)")
	fs.DurationVar(&m.Timeout, "client-timeout", 0, "how long a client waits for an attempt's answer before it gives up on it (closing its connection) and counts a timeout; must be above 0 (default: the run's -timeout)")
	fs.IntVar(&m.Retries, "retries", 0, "how many times a client tries a failed request again (at most `N`+1 attempts); which failures: -retry-on")
	fs.Var(retryOnFlag{&m.RetryOn}, "retry-on", "which failures are retried, a comma-separated `LIST` of 503, timeout, error (transport errors: refused, reset) (default 503,timeout when -retries is above 0)")
	fs.StringVar(&m.Backoff, "backoff", BackoffNone, "wait before a retry: "+BackoffNone+" (at once) | "+BackoffExp+
		" (retry n waits a uniform time in [0, min(-backoff-cap, -backoff-base·2^(n-1))], full jitter)")
	fs.DurationVar(&m.BackoffBase, "backoff-base", 0, "-backoff exp: bound of the first retry's wait (such as 10ms); required with -backoff exp")
	fs.DurationVar(&m.BackoffCap, "backoff-cap", 0, "-backoff exp: largest bound of a retry's wait, not below -backoff-base (default 0: no cap)")
	fs.BoolVar(&m.RetryAfter, "retry-after", false, "a retry of a 503 that carries Retry-After waits at least that long (the longer of it and the backoff)")
	fs.Float64Var(&m.Budget, "retry-budget", 0, "retries per event loop at most this `share` of its first tries over the last 10 s, in [0, 1] (0.2: 20%); a retry over it is not made and the request fails (default 0: no budget)")
	fs.Float64Var(&m.Throttle, "throttle", 0, "client-side adaptive throttling with this `K` (1 or more, such as 2): an attempt is refused locally, never sent, with probability max(0, (requests − K·accepts)/(requests + 1)) over the last 10 s (default 0: none)")
	fs.BoolVar(&m.SendDeadline, "send-deadline", false, "send each attempt's deadline (its client timeout) in the X-Request-Timeout-Ms header")
	fs.BoolVar(&m.MarkRetries, "mark-retries", false, "send each retry's attempt number (2 for the first retry) in the X-Envoy-Attempt-Count header, as clients behind Envoy or gRPC do; first tries carry none (set by -clients retry, backoff, budget, throttle)")
}

// Model is the Model the flags parsed by fs ask for: the -clients
// population (the classic client where none is named) with the client
// flags given set over it, validated.
func (f *Flags) Model(fs *flag.FlagSet) (Model, error) {
	m, err := Named(f.name)
	if f.name == "" {
		m, err = Model{}, nil
	}
	if err != nil {
		return m, err
	}
	// Each value given is set again on its flag bound to m, so that no
	// client flag can be left out here.
	over, population := flag.NewFlagSet("", flag.ContinueOnError), m
	add(over, new(string), &m) // which sets m to the flags' defaults
	m = population
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "clients" || over.Lookup(fl.Name) == nil {
			return
		}
		over.Set(fl.Name, fl.Value.String()) // parsed once already: it cannot fail
		if fl.Name == "client-timeout" && m.Timeout <= 0 && err == nil {
			err = fmt.Errorf("-client-timeout %v must be above 0 (leave it out for the run's -timeout)", m.Timeout)
		}
	})
	if err != nil {
		return m, err
	}
	return m, m.Validate()
}

// FromArgs is the Model of client flags given as command-line arguments
// (["-clients", "untuned", "-client-timeout", "300ms"]): what a run that
// recorded them uses again.
func FromArgs(args []string) (Model, error) {
	fs := flag.NewFlagSet("clients", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f Flags
	f.Add(fs)
	if err := fs.Parse(args); err != nil {
		return Model{}, err
	}
	if fs.NArg() > 0 {
		return Model{}, fmt.Errorf("client flags: unexpected arguments %q", fs.Args())
	}
	return f.Model(fs)
}

// retryOnFlag is -retry-on, read by ParseRetryOn.
type retryOnFlag struct{ r *RetryOn }

func (f retryOnFlag) String() string {
	if f.r == nil {
		return ""
	}
	return f.r.String()
}

func (f retryOnFlag) Set(s string) error {
	r, err := ParseRetryOn(s)
	if err != nil {
		return err
	}
	*f.r = r
	return nil
}

// Args are the client flags fs was given, as arguments FromArgs takes
// again ("-clients", "untuned", "-client-timeout", "300ms"), in the
// order fs visits them; none where no client flag was given.
func Args(fs *flag.FlagSet) []string {
	own := flag.NewFlagSet("", flag.ContinueOnError)
	add(own, new(string), new(Model))
	var args []string
	fs.Visit(func(fl *flag.Flag) {
		if own.Lookup(fl.Name) != nil {
			args = append(args, "-"+fl.Name+"="+fl.Value.String())
		}
	})
	return args
}
