package verdict

import (
	"fmt"
	"strings"
)

// Answers are an overload run's requests by answer class.
type Answers struct {
	OK       int64 // 2xx
	NotFound int64 // 404
	Shed     int64 // 503: shed by the pool
	NoAnswer int64 // status "0": no HTTP answer at all
	Other    int64 // any other status
	Timeouts int64 // error kinds whose name contains "timeout" (any case)
}

// ClassifyAnswers sorts the loader's status codes (summary.json's
// status_codes, "0" = no answer) and error kinds into Answers: a code
// starting with "2" is OK; "404" NotFound; "503" Shed; "0" NoAnswer;
// anything else Other. Timeouts sums the error kinds whose name contains
// "timeout", case-insensitively.
func ClassifyAnswers(codes, errorKinds map[string]int64) Answers {
	var a Answers
	for code, n := range codes {
		switch {
		case strings.HasPrefix(code, "2"):
			a.OK += n
		case code == "404":
			a.NotFound += n
		case code == "503":
			a.Shed += n
		case code == "0":
			a.NoAnswer += n
		default:
			a.Other += n
		}
	}
	for kind, n := range errorKinds {
		if strings.Contains(strings.ToLower(kind), "timeout") {
			a.Timeouts += n
		}
	}
	return a
}

// Reasons states the answer rules that failed:
//   - "answers other than 2xx/404/503" when any request got another status;
//   - "requests without an answer that did not time out" when the requests
//     without an answer are not exactly those that timed out at the
//     loader's -timeout (the two counts must be equal).
func (a Answers) Reasons() []string {
	var why []string
	if a.Other != 0 {
		why = append(why, fmt.Sprintf("answers other than 2xx/404/503 (%d)", a.Other))
	}
	if a.NoAnswer != a.Timeouts {
		why = append(why, fmt.Sprintf("requests without an answer that did not time out (%d without an answer, %d timeouts)", a.NoAnswer, a.Timeouts))
	}
	return why
}
