package pprofdiff

import (
	"strconv"
	"strings"
)

// TopRow is one row of a -top table (Top's, or `go tool pprof -top`'s).
type TopRow struct {
	Flat     string  // as printed, e.g. "120ms" or "-0.05s"
	FlatPct  float64 // of the profile's total; negative where the pool spent less
	Function string
}

// ParseTop reads the rows of a -top table, Top's or `go tool pprof
// -top`'s: they are the same.
func ParseTop(top string) []TopRow {
	var rows []TopRow
	header := false
	for _, line := range strings.Split(top, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "flat" && f[1] == "flat%" {
			header = true
			continue
		}
		if !header || len(f) < 6 {
			continue
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
		if err != nil {
			continue
		}
		// pprof prints the share unsigned; the sign is the flat value's.
		if strings.HasPrefix(f[0], "-") {
			pct = -pct
		}
		rows = append(rows, TopRow{Flat: f[0], FlatPct: pct, Function: strings.Join(f[5:], " ")})
	}
	return rows
}

// LargestIncrease is the row with the largest positive flat share, if
// any: what a diff says the profile spends most on beyond its base.
func LargestIncrease(rows []TopRow) (TopRow, bool) {
	var best TopRow
	found := false
	for _, r := range rows {
		if r.FlatPct > 0 && (!found || r.FlatPct > best.FlatPct) {
			best, found = r, true
		}
	}
	return best, found
}
