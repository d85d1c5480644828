package latency

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMicrosClampsIntoRange(t *testing.T) {
	f := func(d time.Duration, want int64) {
		t.Helper()
		assert.Equal(t, want, Micros(d), "Micros(%v)", d)
	}
	f(0, MinMicros)
	f(-time.Second, MinMicros)
	f(999*time.Nanosecond, MinMicros)
	f(1500*time.Microsecond, 1500)
	f(2*time.Minute, MaxMicros)

	h := New()
	Record(h, time.Hour) // would be dropped without the clamp
	assert.Equal(t, int64(1), h.TotalCount())
}

func TestFormatMicrosLikeWrk(t *testing.T) {
	f := func(us int64, want string) {
		t.Helper()
		assert.Equal(t, want, FormatMicros(us))
	}
	f(812, "812.00us")
	f(4870, "4.87ms")
	f(1_200_000, "1.20s")
	f(150_000_000, "2.50m")
}

func TestPrintTableHasWrk2Rows(t *testing.T) {
	h := New()
	for v := int64(1); v <= 10000; v++ {
		require.NoError(t, h.RecordValue(v))
	}
	var buf bytes.Buffer
	PrintTable(&buf, TitleCorrected, h)
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	require.Len(t, lines, 1+len(Percentiles))
	assert.Equal(t, "  "+TitleCorrected, lines[0])
	assert.Equal(t, " 50.000%    5.00ms", lines[1])
	assert.Equal(t, " 99.900%    9.99ms", lines[5])
	assert.Equal(t, "100.000%   10.01ms", lines[8]) // 10000 µs reads back as the top of its 3-digit bucket
}

func TestSummarizeNamesPercentiles(t *testing.T) {
	h := New()
	for v := int64(1); v <= 1000; v++ {
		require.NoError(t, h.RecordValue(v*1000)) // 1..1000 ms
	}
	s := Summarize(h)
	assert.Equal(t, int64(1000), s.Count)
	assert.InDelta(t, 500, s.Pct["p50"], 1)
	assert.InDelta(t, 999, s.Pct["p99.9"], 1)
	assert.InDelta(t, 1000, s.Pct["p100"], 1)
	assert.Len(t, s.Pct, len(Percentiles))
}

func TestLiveQuantileIsATightUpperBound(t *testing.T) {
	var l Live
	for v := int64(1); v <= 100_000; v++ {
		l.Record(v)
	}
	var s LiveSnapshot
	l.AddTo(&s)
	require.Equal(t, int64(100_000), s.Count())
	f := func(q float64, exact int64) {
		t.Helper()
		got := s.Quantile(q)
		assert.GreaterOrEqual(t, got, exact, "q=%v", q)
		assert.LessOrEqual(t, float64(got), float64(exact)*1.0625+1, "q=%v", q)
	}
	f(0.5, 50_000)
	f(0.99, 99_000)
	f(1, 100_000)
	f(0.00001, 1)
	assert.Zero(t, (&LiveSnapshot{}).Quantile(0.99))
}

func TestLiveIndexRoundTrips(t *testing.T) {
	for _, v := range []uint64{0, 1, 15, 16, 17, 31, 32, 1000, 1 << 20, MaxMicros, 1<<63 - 1} {
		i := liveIndex(v)
		assert.GreaterOrEqual(t, liveUpper(i), int64(v), "v=%d", v)
		if i > 0 {
			assert.Less(t, liveUpper(i-1), int64(v), "v=%d: bucket below must end before v", v)
		}
	}
}
