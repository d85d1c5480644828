package pprofdiff

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// topOutputUnit is the unit the table prints values in
// (internal/report's selectOutputUnit): the smallest row's, unless the
// total's is larger and the smallest row is under 1 % of the total, then
// the unit that prints it as at least 0.01.
func topOutputUnit(g []*topNode, total int64, sampleUnit string) string {
	if len(g) == 0 {
		return "minimum"
	}
	var least int64
	for _, n := range g {
		v := abs64(n.flat)
		if v == 0 {
			v = abs64(n.cum)
		}
		if v > 0 && (least == 0 || v < least) {
			least = v
		}
	}
	if least == 0 {
		least = total
	}
	_, unit := scaleValue(least, sampleUnit, "minimum")
	if _, most := scaleValue(total, sampleUnit, "minimum"); unit != most && least*100 < total {
		_, unit = scaleValue(100*least, sampleUnit, "minimum")
	}
	if unit == "" {
		return sampleUnit
	}
	return unit
}

// pprofUnit is one unit pprof scales values to (internal/measurement's
// Unit): its printed name, the names a profile may give it, and its size
// in its family's base unit.
type pprofUnit struct {
	name    string
	aliases []string
	factor  float64
}

// pprofUnitFamily is a measurement's units, and the one a value takes
// where none fits.
type pprofUnitFamily struct {
	units    []pprofUnit
	fallback pprofUnit
}

// pprofUnitFamilies are the byte and time units of pprof's measurement
// package. (Its GCU family is left out: no Go profile uses it.)
var pprofUnitFamilies = []pprofUnitFamily{{
	units: []pprofUnit{
		{"B", []string{"b", "byte"}, 1},
		{"kB", []string{"kb", "kbyte", "kilobyte"}, 1 << 10},
		{"MB", []string{"mb", "mbyte", "megabyte"}, 1 << 20},
		{"GB", []string{"gb", "gbyte", "gigabyte"}, 1 << 30},
		{"TB", []string{"tb", "tbyte", "terabyte"}, 1 << 40},
		{"PB", []string{"pb", "pbyte", "petabyte"}, 1 << 50},
	},
	fallback: pprofUnit{"B", nil, 1},
}, {
	units: []pprofUnit{
		{"ns", []string{"ns", "nanosecond"}, float64(time.Nanosecond)},
		{"us", []string{"μs", "us", "microsecond"}, float64(time.Microsecond)},
		{"ms", []string{"ms", "millisecond"}, float64(time.Millisecond)},
		{"s", []string{"s", "sec", "second"}, float64(time.Second)},
		{"hrs", []string{"hour", "hr"}, float64(time.Hour)},
	},
	fallback: pprofUnit{"s", nil, float64(time.Second)},
}}

// find is the unit a profile's unit name means, or nil: a plural is
// singular, in any case.
func (f *pprofUnitFamily) find(name string) *pprofUnit {
	name = strings.ToLower(name)
	if utf8.RuneCountInString(name) > 2 {
		name = strings.TrimSuffix(name, "s")
	}
	for i, u := range f.units {
		if slices.Contains(u.aliases, name) {
			return &f.units[i]
		}
	}
	return nil
}

// scaleValue converts v from one unit to another as pprof's
// measurement.Scale does: to "minimum" or "auto", the largest unit that
// keeps it at least 1. The unit returned is "" for counts, which print
// bare.
func scaleValue(v int64, from, to string) (float64, string) {
	if v < 0 && -v > 0 {
		s, u := scaleValue(-v, from, to)
		return -s, u
	}
	for i := range pprofUnitFamilies {
		family := &pprofUnitFamilies[i]
		fu := family.find(from)
		if fu == nil {
			continue
		}
		x := float64(v) * fu.factor
		tu := &family.fallback
		if to == "minimum" || to == "auto" {
			var f float64
			for j, u := range family.units {
				if u.factor >= f && x/u.factor >= 1 {
					f, tu = u.factor, &family.units[j]
				}
			}
		} else if u := family.find(to); u != nil {
			tu = u
		}
		return x / tu.factor, tu.name
	}
	switch to {
	case "count", "sample", "unit", "minimum", "auto":
		return float64(v), ""
	}
	return float64(v), to
}

// scaledLabel prints v as pprof does: in unit to, with at most two
// decimals.
func scaledLabel(v int64, from, to string) string {
	s, u := scaleValue(v, from, to)
	text := strings.TrimSuffix(fmt.Sprintf("%.2f", s), ".00")
	if text == "0" || text == "-0" {
		return "0"
	}
	return text + u
}

// percentage prints |v| as a share of total as pprof does: unsigned,
// five wide, at least two significant digits.
func percentage(v, total int64) string {
	var ratio float64
	if total != 0 {
		ratio = math.Abs(float64(v)/float64(total)) * 100
	}
	switch {
	case ratio >= 99.95 && ratio <= 100.05:
		return "  100%"
	case ratio >= 1:
		return fmt.Sprintf("%5.2f%%", ratio)
	}
	return fmt.Sprintf("%5.2g%%", ratio)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
