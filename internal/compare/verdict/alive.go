package verdict

import (
	"fmt"
	"strings"
)

// Alive is how the server ended an overload step.
type Alive struct {
	// Answering: GET /v0/status answered 200 after the overload and the
	// recovery probes.
	Answering bool
	// Signalled: SIGTERM could be delivered (the process still existed).
	Signalled bool
	// ExitCode of the process: after SIGTERM when Signalled, else the
	// code it had already ended with.
	ExitCode int
	// Log is the server's output (or its tail), searched for panics.
	Log string
}

// Reasons states each alive rule that failed:
//   - "not answering after the overload" unless Answering, and also when
//     SIGTERM could not be delivered (the process was gone);
//   - "exit N on SIGTERM" when the exit code is not 0, or "exit N before
//     SIGTERM" for a process that had already ended;
//   - "panic in its log" when LogHasPanic.
func (a Alive) Reasons() []string {
	var why []string
	if !a.Answering || !a.Signalled {
		why = append(why, "not answering after the overload")
	}
	switch {
	case a.ExitCode == 0:
	case a.Signalled:
		why = append(why, fmt.Sprintf("exit %d on SIGTERM", a.ExitCode))
	default:
		why = append(why, fmt.Sprintf("exit %d before SIGTERM", a.ExitCode))
	}
	if LogHasPanic(a.Log) {
		why = append(why, "panic in its log")
	}
	return why
}

// LogHasPanic reports whether log holds a Go panic or runtime fatal error:
// a line that starts with "panic" or contains "fatal error".
func LogHasPanic(log string) bool {
	return strings.HasPrefix(log, "panic") || strings.Contains(log, "\npanic") || strings.Contains(log, "fatal error")
}
