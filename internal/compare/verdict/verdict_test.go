package verdict

import (
	"math"
	"strings"
	"testing"
)

var nan = math.NaN()

func TestAliveReasons(t *testing.T) {
	f := func(a Alive, want ...string) {
		t.Helper()
		got := a.Reasons()
		if len(got) != len(want) {
			t.Fatalf("%+v: reasons %q, want %q", a, got, want)
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Fatalf("%+v: reasons %q, want %q", a, got, want)
			}
		}
	}
	f(Alive{Answering: true, Signalled: true})
	f(Alive{Answering: false, Signalled: true}, "not answering after the overload")
	f(Alive{Answering: true, Signalled: false}, "not answering after the overload")
	f(Alive{Answering: true, Signalled: true, ExitCode: 1}, "exit 1 on SIGTERM")
	// A process that had already ended: its exit code is judged too, and
	// not blamed on SIGTERM.
	f(Alive{Answering: false, Signalled: false, ExitCode: 2}, "not answering after the overload", "exit 2 before SIGTERM")
	f(Alive{Answering: false, Signalled: false, ExitCode: 0}, "not answering after the overload")
	f(Alive{Answering: true, Signalled: true, ExitCode: 2, Log: "level=INFO msg=serving\npanic: boom\n"},
		"exit 2 on SIGTERM", "panic in its log")
}

func TestLogHasPanic(t *testing.T) {
	f := func(log string, want bool) {
		t.Helper()
		if got := LogHasPanic(log); got != want {
			t.Fatalf("LogHasPanic(%q) = %v, want %v", log, got, want)
		}
	}
	f("", false)
	f("level=INFO msg=serving addr=127.0.0.1:1\n", false)
	f("panic: runtime error: index out of range\n", true)
	f("ok\npanic(0x1234)\n", true)
	f("fatal error: concurrent map writes\n", true)
	f("runtime: fatal error: out of memory", true)
	// Only a line that starts with panic counts: a request path or a log
	// message mentioning it does not.
	f("level=INFO msg=\"recovered, no panic\"\n", false)
	f("  panic: indented\n", false)
}

func TestAnswerReasons(t *testing.T) {
	f := func(codes, kinds map[string]int64, reasons ...string) {
		t.Helper()
		why := answerReasons(codes, kinds)
		if len(why) != len(reasons) {
			t.Fatalf("%v, %v: reasons %q, want %q", codes, kinds, why, reasons)
		}
		for i := range reasons {
			if !strings.HasPrefix(why[i], reasons[i]) {
				t.Fatalf("%v, %v: reasons %q, want %q", codes, kinds, why, reasons)
			}
		}
	}
	f(nil, nil)
	f(map[string]int64{"200": 10, "201": 5, "202": 1, "404": 3, "503": 7}, nil)
	f(map[string]int64{"200": 10, "0": 4}, map[string]int64{"timeout": 3, "Client.Timeout exceeded": 1, "connection reset": 2})
	f(map[string]int64{"200": 10, "500": 1, "400": 2, "429": 1}, nil, "answers other than 2xx/404/503 (4)")
	f(map[string]int64{"0": 5}, map[string]int64{"timeout": 2, "connection refused": 3},
		"requests without an answer that did not time out (5 without an answer, 2 timeouts)")
	// overload.sh compared the counts for equality: more timeouts than
	// requests without an answer is also a mismatch.
	f(map[string]int64{"0": 1}, map[string]int64{"read timeout": 2},
		"requests without an answer that did not time out (1 without an answer, 2 timeouts)")
	// 2xx means a code starting with 2, as the script's test("^2").
	f(map[string]int64{"299": 1, "4040": 1}, nil, "answers other than 2xx/404/503 (1)")
}

func TestNormalP99(t *testing.T) {
	f := func(base, want float64) {
		t.Helper()
		if got := NormalP99(base); got != want {
			t.Fatalf("NormalP99(%v) = %v, want %v", base, got, want)
		}
	}
	f(0, 5)
	f(1, 6)   // + 5 ms wins below 5 ms
	f(5, 10)  // both rules agree
	f(20, 40) // 2× wins above 5 ms
	f(nan, 5) // unknown baseline reads as 0, as the script's fallback
	f(-1, 5)
}

func TestNotRecovered(t *testing.T) {
	f := func(base float64, after []float64, want string) {
		t.Helper()
		if got := (Recovery{BaselineMs: base, AfterMs: after}).notRecovered(); got != want {
			t.Fatalf("notRecovered(%v, %v) = %q, want %q", base, after, got, want)
		}
	}
	f(2, []float64{3}, "")
	f(2, []float64{500, 40, 7, 3}, "")                                          // 7 ≤ max(4, 7)
	f(2, []float64{500, 7.0001}, "p99 not normal (≤ 7 ms) within 2s")           // just above the threshold is not normal
	f(20, []float64{41, 40}, "")                                                // 2× rule, inclusive
	f(20, []float64{41}, "p99 not normal (≤ 40 ms) within 1s")                  // 2× rule
	f(2, []float64{nan, 3}, "")                                                 // an unknown second is skipped
	f(2, []float64{nan}, "p99 not normal (≤ 7 ms) within 1s")                   // an unknown second is not normal
	f(2, []float64{500, 300, 100, 50, 20}, "p99 not normal (≤ 7 ms) within 5s") // never normal
	f(2, nil, "p99 not normal (≤ 7 ms) within 0s")
	f(nan, []float64{4.9}, "") // unknown baseline: 5 ms
	f(nan, []float64{5.1}, "p99 not normal (≤ 5 ms) within 1s")
}

func TestGrowth(t *testing.T) {
	const m = 1 << 20
	f := func(samples []RSSSample, want RSSGrowth) {
		t.Helper()
		got := Growth(samples)
		if math.Abs(got.MiBPerS-want.MiBPerS) > 1e-9 || got.SteadyMiB != want.SteadyMiB {
			t.Fatalf("Growth(%v) = %+v, want %+v", samples, got, want)
		}
	}
	f(nil, RSSGrowth{})
	f([]RSSSample{{0, 100 * m}}, RSSGrowth{SteadyMiB: 100})
	// Flat second half after a climb: steady, no growth.
	f([]RSSSample{{0, 50 * m}, {1, 300 * m}, {2, 200 * m}, {3, 200 * m}},
		RSSGrowth{MiBPerS: 0, SteadyMiB: 200})
	// Growing 10 MiB/s in the second half; the first half is ignored.
	f([]RSSSample{{0, 10 * m}, {1, 500 * m}, {2, 100 * m}, {3, 110 * m}, {4, 120 * m}, {5, 130 * m}},
		RSSGrowth{MiBPerS: 10, SteadyMiB: 120})
	// Odd count: the middle sample belongs to the second half (n/2 on).
	f([]RSSSample{{0, 1 * m}, {1, 2 * m}, {2, 5 * m}, {3, 6 * m}, {4, 8 * m}},
		RSSGrowth{MiBPerS: 1.5, SteadyMiB: 6})
	// Even count in the half: the lower middle value, as the script.
	f([]RSSSample{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 4 * m}, {5, 1 * m}, {6, 3 * m}, {7, 2 * m}},
		RSSGrowth{MiBPerS: -0.4, SteadyMiB: 2})
	// All at one instant: no slope rather than a division by zero.
	f([]RSSSample{{7, 1 * m}, {7, 9 * m}}, RSSGrowth{SteadyMiB: 9})
	f([]RSSSample{{0.1, 1 * m}, {0.1, 2 * m}, {0.1, 3 * m}, {0.1, 4 * m}}, RSSGrowth{SteadyMiB: 3})
	// Unix-time offsets do not spoil the slope.
	f([]RSSSample{{1.7e9, 100 * m}, {1.7e9 + 1, 101 * m}, {1.7e9 + 2, 102 * m}, {1.7e9 + 3, 103 * m}},
		RSSGrowth{MiBPerS: 1, SteadyMiB: 102})
}

func TestJudge(t *testing.T) {
	healthy := Overload{
		Alive:    Alive{Answering: true, Signalled: true},
		Codes:    map[string]int64{"200": 900, "404": 50, "503": 400, "0": 3},
		Recovery: Recovery{BaselineMs: 2, AfterMs: []float64{80, 4}},
	}
	healthy.ErrorKinds = map[string]int64{"timeout": 3}
	f := func(name string, change func(o *Overload), want string, failed bool) {
		t.Helper()
		o := healthy
		if change != nil {
			change(&o)
		}
		v := Judge(o)
		if v.String() != want {
			t.Fatalf("%s: verdict %q, want %q", name, v.String(), want)
		}
		if v.Failed() != failed {
			t.Fatalf("%s: Failed() = %v, want %v", name, v.Failed(), failed)
		}
	}
	f("healthy", nil, "PASS", false)
	f("dead", func(o *Overload) { o.Alive = Alive{} }, "FAIL: not answering after the overload", true)
	f("no summary", func(o *Overload) { o.Codes = nil }, "FAIL: no record of the overload run's answers", true)
	f("no requests at all", func(o *Overload) { o.Codes, o.ErrorKinds = map[string]int64{}, nil }, "PASS", false)
	f("several", func(o *Overload) {
		o.Alive.ExitCode = 1
		o.Codes = map[string]int64{"200": 1, "500": 2}
		o.Recovery.AfterMs = []float64{900}
	}, "FAIL: exit 1 on SIGTERM; answers other than 2xx/404/503 (2); "+
		"requests without an answer that did not time out (0 without an answer, 3 timeouts); p99 not normal (≤ 7 ms) within 1s", true)
	f("unbounded, healthy", func(o *Overload) { o.Unbounded = true }, "exception (unbounded)", false)
	f("unbounded, slow to recover", func(o *Overload) {
		o.Unbounded = true
		o.Recovery.AfterMs = []float64{900, 800}
	}, "exception: p99 not normal (≤ 7 ms) within 2s", false)
}

func TestVerdictString(t *testing.T) {
	f := func(v Verdict, want string) {
		t.Helper()
		if got := v.String(); got != want {
			t.Fatalf("%+v: %q, want %q", v, got, want)
		}
	}
	f(Verdict{Pass: true}, "PASS")
	f(Verdict{Reasons: []string{"a", "b"}}, "FAIL: a; b")
	f(Verdict{Pass: true, Exception: true}, "exception (unbounded)")
	f(Verdict{Exception: true, Reasons: []string{"a"}}, "exception: a")
}
