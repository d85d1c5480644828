package schedule

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStartAt(t *testing.T) {
	f := func(in string, want time.Time) {
		t.Helper()
		got, err := ParseStartAt(in)
		require.NoError(t, err, in)
		assert.True(t, want.Equal(got), "%s: %v, want %v", in, got, want)
	}
	noon := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f("2026-11-24T12:00:00Z", noon)
	f("2026-11-24T12:00:00.25Z", noon.Add(250*time.Millisecond))
	f("2026-11-24T13:00:00.000000001+01:00", noon.Add(time.Nanosecond))
	f(strconv.FormatInt(noon.Unix(), 10), noon)
	f(strconv.FormatInt(noon.Unix(), 10)+".25", noon.Add(250*time.Millisecond))
	f(strconv.FormatInt(noon.Unix(), 10)+".000000001", noon.Add(time.Nanosecond))
	for _, bad := range []string{"", "noon", "1.2.3", "-5", "2026-11-24", "1795003200.1234567891"} {
		_, err := ParseStartAt(bad)
		assert.Error(t, err, bad)
	}
}
