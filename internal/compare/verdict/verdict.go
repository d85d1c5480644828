// Package verdict holds the judgements the comparison report states, as
// pure functions of measured numbers: whether a server survived an
// overload step, one function per rule.
package verdict

import "strings"

// Verdict is the outcome of the overload checks for one pool × policy.
type Verdict struct {
	// Pass is true when no rule failed. For the exception it is reported
	// but does not decide anything: see Failed.
	Pass bool
	// Exception marks the unbounded variant (a queue allowed to grow
	// without limit): it is measured and reported, not judged.
	Exception bool
	// Reasons are the failed rules in words, in the order the rules are
	// listed in Overload; empty when every rule held.
	Reasons []string
}

// Failed reports whether the verdict counts as a failure of the run: a
// rule failed and the combination is not the unbounded exception.
func (v Verdict) Failed() bool { return !v.Pass && !v.Exception }

// The prefixes of String before a verdict's reasons, which compare.json
// keeps and the findings read back.
const (
	FailPrefix      = "FAIL: "
	ExceptionPrefix = "exception: "
)

// String is the verdict as the report's table cell shows it: "PASS",
// "FAIL: reason; reason", "exception (unbounded)" or "exception: reason".
func (v Verdict) String() string {
	switch {
	case v.Exception && len(v.Reasons) == 0:
		return "exception (unbounded)"
	case v.Exception:
		return ExceptionPrefix + strings.Join(v.Reasons, "; ")
	case v.Pass:
		return "PASS"
	default:
		return FailPrefix + strings.Join(v.Reasons, "; ")
	}
}

// Overload is what an overload step measured for one pool × policy.
type Overload struct {
	// Unbounded is the named exception: a pool run with an unbounded
	// queue (-cap -1), whose growth is reported, not judged.
	Unbounded bool
	// Alive says how the server ended the step.
	Alive Alive
	// Codes and ErrorKinds are the loader's status codes and error kinds
	// for the overload run (summary.json status_codes and error_kinds).
	// Nil Codes means the run left no record of its answers, which fails
	// the answer rules as a missing summary.json did in overload.sh.
	Codes      map[string]int64
	ErrorKinds map[string]int64
	// Recovery are the p99 values before and after the overload.
	Recovery Recovery
}

// Judge applies every overload rule, in this order, and collects the
// reasons of those that fail:
//
//  1. alive: answering /v0/status after the overload (Alive.Reasons);
//  2. stopped cleanly: SIGTERM delivered, exit code 0 (Alive.Reasons);
//  3. no panic or "fatal error" in its log (Alive.Reasons);
//  4. every answer 2xx, 404 or 503 (answerReasons), and a record of
//     the answers at all (non-nil Codes);
//  5. every request without an answer timed out at the loader (answerReasons);
//  6. p99 back to normal within the recovery window (notRecovered).
//
// RSS growth (Growth) is reported, not judged, as overload.sh did: a
// bounded queue can still grow the heap for a while as Pebble's caches
// warm up. The unbounded variant is an exception: its reasons are kept but it is
// not a failure.
func Judge(o Overload) Verdict {
	var why []string
	why = append(why, o.Alive.Reasons()...)
	if o.Codes == nil {
		why = append(why, "no record of the overload run's answers")
	} else {
		why = append(why, answerReasons(o.Codes, o.ErrorKinds)...)
	}
	if r := o.Recovery.notRecovered(); r != "" {
		why = append(why, r)
	}
	return Verdict{Pass: len(why) == 0, Exception: o.Unbounded, Reasons: why}
}
