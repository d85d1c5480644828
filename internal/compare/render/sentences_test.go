package render

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// maxSentence is the longest sentence a report may hold, in characters.
const maxSentence = 300

// longSentences are md's sentences longer than maxSentence, each with its
// line. A sentence ends at ". " or at a line's end; table rows and code
// (fenced, or indented four spaces) hold none.
func longSentences(md string) []string {
	var out []string
	code := false
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			code = !code
			continue
		}
		if code || strings.HasPrefix(trimmed, "|") || strings.HasPrefix(line, "    ") {
			continue
		}
		for _, s := range strings.SplitAfter(line, ". ") {
			if utf8.RuneCountInString(strings.TrimSpace(s)) > maxSentence {
				out = append(out, strings.TrimSpace(s))
			}
		}
	}
	return out
}

func TestLongSentences(t *testing.T) {
	md := "short. " + strings.Repeat("x", maxSentence+1) + ". short\n| " + strings.Repeat("y", 400) + " |\n```\n" + strings.Repeat("z", 400) + "\n```\n"
	require.Equal(t, []string{strings.Repeat("x", maxSentence+1) + "."}, longSentences(md))
	require.Empty(t, longSentences(strings.Repeat("word ", 50)+"\n"+strings.Repeat("word ", 50)+"\n"))
}

// TestReportSentences wants no sentence over maxSentence characters in any
// published report or golden fixture: a reader takes a report in sentence
// by sentence, and one that runs longer is two.
func TestReportSentences(t *testing.T) {
	reports, err := filepath.Glob(filepath.Join("..", "..", "..", "docs", "report", "*", ReportFile))
	require.NoError(t, err)
	goldens, err := filepath.Glob(filepath.Join("testdata", "*", ReportFile))
	require.NoError(t, err)
	require.NotEmpty(t, reports, "no published report found")
	require.NotEmpty(t, goldens, "no golden report found")
	for _, path := range append(reports, goldens...) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, s := range longSentences(string(b)) {
			t.Errorf("%s: a sentence of %d characters (at most %d): %.120s…", path, utf8.RuneCountInString(s), maxSentence, s)
		}
	}
}
