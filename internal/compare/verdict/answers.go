package verdict

import (
	"fmt"
	"strings"
)

// answerReasons states the answer rules that failed, from the loader's
// status codes (summary.json's status_codes, "0" = no answer) and error
// kinds:
//   - "answers other than 2xx/404/503" when any request got another
//     status (2xx: a code starting with "2");
//   - "requests without an answer that did not time out" when the
//     requests without an answer are not exactly those that timed out at
//     the loader's -timeout (the error kinds whose name contains
//     "timeout", case-insensitively): the two counts must be equal.
func answerReasons(codes, errorKinds map[string]int64) []string {
	var other, noAnswer, timeouts int64
	for code, n := range codes {
		switch {
		case strings.HasPrefix(code, "2"), code == "404", code == "503":
		case code == "0":
			noAnswer += n
		default:
			other += n
		}
	}
	for kind, n := range errorKinds {
		if strings.Contains(strings.ToLower(kind), "timeout") {
			timeouts += n
		}
	}
	var why []string
	if other != 0 {
		why = append(why, fmt.Sprintf("answers other than 2xx/404/503 (%d)", other))
	}
	if noAnswer != timeouts {
		why = append(why, fmt.Sprintf("requests without an answer that did not time out (%d without an answer, %d timeouts)", noAnswer, timeouts))
	}
	return why
}
