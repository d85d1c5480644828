package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// ratio prints the median of B/A with its interval, and refuses what is
// not a list of pairs with exit 2.
func TestRatioOfPairs(t *testing.T) {
	f := func(in string, code int, out, errs string) {
		t.Helper()
		stdin = strings.NewReader(in)
		t.Cleanup(func() { stdin = nil })
		gotCode, gotOut, gotErrs := invoke(t, "ratio")
		assert.Equal(t, code, gotCode, in)
		assert.Equal(t, out, gotOut, in)
		assert.Contains(t, gotErrs, errs, in)
	}
	f("10 9\n10 8\n\n10 9.5\n11 9\n10 9\n9 8\n", 0, "0.894 [0.800, 0.950] (6 pairs)\n", "")
	f("20 10\n20 30\n", 0, "1.000 [unbounded] (2 pairs)\n", "")
	f("10 9 8\n", 2, "", `line 1: "10 9 8" is not a pair "A B"`)
	f("10 x\n", 2, "", `line 1: "10 x": both values must be numbers`)
	f("", 2, "", "no pairs on standard input")
	code, _, errs := invoke(t, "ratio", "extra")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "the pairs come on standard input")
}
