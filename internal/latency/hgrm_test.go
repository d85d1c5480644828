package latency

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A row as wrk2 and HdrHistogram write it: four right-aligned columns of
// width 12 separated by one space, value in ms with 3 decimals.
var hgrmRow = regexp.MustCompile(`^ *(\d+\.\d{3}) +(\d\.\d{6}) +(\d+) +(\d+\.\d{2}|inf)$`)

// The pattern plotting scripts (hdr-plot) use to pick rows.
var plotterRow = regexp.MustCompile(`\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)`)

func TestWriteHGRMIsTheWrk2PercentileSpectrum(t *testing.T) {
	h := New()
	for v := int64(1); v <= 10_000; v++ { // 1 µs .. 10 ms, uniform
		require.NoError(t, h.RecordValue(v))
	}
	var buf bytes.Buffer
	require.NoError(t, WriteHGRM(&buf, h))
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")

	require.GreaterOrEqual(t, len(lines), 10)
	assert.Equal(t, "       Value   Percentile   TotalCount 1/(1-Percentile)", lines[0])
	assert.Equal(t, "", lines[1])

	var rows [][]string
	footer := []string{}
	for _, l := range lines[2:] {
		if strings.HasPrefix(l, "#[") {
			footer = append(footer, l)
			continue
		}
		m := hgrmRow.FindStringSubmatch(l)
		require.NotNil(t, m, "row %q is not in .hgrm form", l)
		assert.Len(t, l, 51, "row %q: columns must be 12 wide", l)
		rows = append(rows, m)
	}
	require.Len(t, footer, 3)
	assert.Regexp(t, `^#\[Mean    = +5\.\d{3}, StdDeviation   = +2\.\d{3}\]$`, footer[0])
	assert.Regexp(t, `^#\[Max     = +10\.\d{3}, Total count    = +10000\]$`, footer[1])
	assert.Regexp(t, `^#\[Buckets = +\d+, SubBuckets     = +2048\]$`, footer[2])

	var prevP float64
	var prevC int64
	sawMedian := false
	for i, m := range rows {
		v, _ := strconv.ParseFloat(m[1], 64)
		p, _ := strconv.ParseFloat(m[2], 64)
		c, _ := strconv.ParseInt(m[3], 10, 64)
		assert.GreaterOrEqual(t, p, prevP, "percentiles must not decrease")
		assert.GreaterOrEqual(t, c, prevC, "counts must not decrease")
		prevP, prevC = p, c
		if p == 0.5 {
			sawMedian = true
			assert.InDelta(t, 5.0, v, 0.01, "the median of 1..10000 µs is 5 ms")
		}
		if i < len(rows)-1 {
			assert.True(t, plotterRow.MatchString(lines[2+i]), "plotters must read row %q", lines[2+i])
		}
	}
	assert.True(t, sawMedian, "a row at percentile 0.5")
	last := rows[len(rows)-1]
	assert.Equal(t, "1.000000", last[2])
	assert.Equal(t, "10000", last[3])
	assert.Equal(t, "inf", last[4])
}
