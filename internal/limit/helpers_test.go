package limit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// feeder drives a limit through whole windows on a timeline of its own:
// sample times are numbers the test chooses (the Config.Now scale starts
// at 0), so what a test sees never depends on how fast the machine runs.
type feeder struct {
	t  testing.TB
	w  *windowed
	at int64 // when the open window opened
}

func newFeeder(t testing.TB, cfg Config) *feeder {
	t.Helper()
	cfg.Now = func() int64 { return 0 }
	l, err := New(cfg)
	require.NoError(t, err)
	w, ok := l.(*windowed)
	require.True(t, ok, "%s is not windowed", l.Name())
	return &feeder{t: t, w: w}
}

// win describes one window's samples.
type win struct {
	rtt      time.Duration // every sample's rtt ...
	outlier  time.Duration // ... but the first one's, where set
	inflight int           // every sample's inflight; 0: the limit when the window opened
	drop     bool          // the first sample reports a drop
	n        int           // samples; 0: Config.WindowSamples
}

// window feeds one window and returns the limit after it. The samples'
// ends are spread evenly up to the window's deadline; the last ends on it,
// which closes the window: the test fails if it did not.
func (f *feeder) window(w win) int {
	f.t.Helper()
	n := w.n
	if n == 0 {
		n = int(f.w.minSamples)
	}
	inflight := w.inflight
	if inflight == 0 {
		inflight = f.w.Current()
	}
	deadline := f.w.deadline.Load()
	before := f.w.windows
	for i := range n {
		rtt := w.rtt
		if i == 0 && w.outlier != 0 {
			rtt = w.outlier
		}
		end := f.at + (deadline-f.at)*int64(i+1)/int64(n)
		f.w.Sample(end-int64(rtt), rtt, inflight, w.drop && i == 0)
	}
	require.Equal(f.t, before+1, f.w.windows, "the window's last sample closes it")
	f.at = deadline
	return f.w.Current()
}

// windows feeds k windows like w and returns the limit after each.
func (f *feeder) windows(k int, w win) []int {
	f.t.Helper()
	limits := make([]int, k)
	for i := range limits {
		limits[i] = f.window(w)
	}
	return limits
}

// until feeds windows like w until cond holds for the limit, at most k of
// them, and returns how many it fed (k+1 if cond never held).
func (f *feeder) until(k int, w win, cond func(limit int) bool) int {
	f.t.Helper()
	for i := 1; i <= k; i++ {
		if cond(f.window(w)) {
			return i
		}
	}
	return k + 1
}
