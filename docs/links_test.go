package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pages are the markdown files whose links must resolve, relative to
// root: README.md and every page under docs/ (the published reports
// included), loadtest/README.md too.
func pages(t *testing.T, root string) []string {
	t.Helper()
	out := []string{"README.md", "loadtest/README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	require.NoError(t, err)
	return out
}

var (
	// inlineLink is a markdown inline link's target: [text](target) or
	// [text](target "title"); the text may span lines.
	inlineLink = regexp.MustCompile(`\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)`)
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	headingRef = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// prose is a page's text without its fenced code blocks and code spans,
// and its ATX headings (outside code blocks).
func prose(text string) (body string, headings []string) {
	var b strings.Builder
	in := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			in = !in
			continue
		}
		if in {
			continue
		}
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.TrimLeft(h, "#")
			if strings.HasPrefix(h, " ") {
				headings = append(headings, strings.TrimSpace(h))
			}
		}
		b.WriteString(codeSpan.ReplaceAllString(line, ""))
		b.WriteByte('\n')
	}
	return b.String(), headings
}

// slug is GitHub's anchor for a heading: its text as rendered (a link's
// text, no backticks), lower-cased, every character that is not a
// letter, a digit, a mark, '_', '-' or a space dropped, spaces made '-'.
func slug(heading string) string {
	h := strings.ToLower(headingRef.ReplaceAllString(heading, "$1"))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are a page's heading anchors; a repeated slug gets -1, -2, ...
// after its first, as GitHub numbers them.
func anchors(headings []string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, h := range headings {
		s := slug(h)
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// brokenLinks lists the relative links of the page at root/page whose
// file does not exist, or whose #anchor into a markdown page names no
// heading of it.
func brokenLinks(t *testing.T, root, page string) []string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, page))
	require.NoError(t, err)
	body, _ := prose(string(text))
	var out []string
	for _, m := range inlineLink.FindAllStringSubmatch(body, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		path := filepath.Join(root, page)
		if file != "" {
			path = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
		}
		content, err := os.ReadFile(path)
		if err != nil {
			if info, serr := os.Stat(path); serr == nil && info.IsDir() && anchor == "" {
				continue
			}
			out = append(out, fmt.Sprintf("%s: %s: no such file", page, target))
			continue
		}
		if anchor == "" || !strings.HasSuffix(path, ".md") {
			continue
		}
		_, headings := prose(string(content))
		if !anchors(headings)[anchor] {
			out = append(out, fmt.Sprintf("%s: %s: no heading with that anchor", page, target))
		}
	}
	return out
}

// TestLinks holds every relative link of README.md and of the pages
// under docs/ to a file that exists and, for an #anchor into a
// markdown page, to one of its headings.
func TestLinks(t *testing.T) {
	for _, page := range pages(t, "..") {
		for _, broken := range brokenLinks(t, "..", page) {
			t.Error(broken)
		}
	}
}

// TestBrokenLinks checks the link reading on pages of its own.
func TestBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	write("b/other.md", "# Other\n\n## Against the floor: where it stands (`make bench-floor`)\n\n## Twice\n\n## Twice\n\n"+
		"```sh\n# not a heading\n```\n")
	write("a.md", "# A page\n\n## Which pool?\n\nSee [it](b/other.md#against-the-floor-where-it-stands-make-bench-floor),\n"+
		"[the second](b/other.md#twice-1), [here](#which-pool), [a folder](b/) and [out](https://example.com/x#y).\n"+
		"Broken: [file](b/none.md), [anchor](b/other.md#not-a-heading), [mine](#nowhere), [third](b/other.md#twice-2),\n"+
		"[split\nover lines](b/gone.md#x). `[code](not/checked.md)`\n```\n[in a block](not/checked.md)\n```\n")
	assert.Equal(t, []string{
		"a.md: b/none.md: no such file",
		"a.md: b/other.md#not-a-heading: no heading with that anchor",
		"a.md: #nowhere: no heading with that anchor",
		"a.md: b/other.md#twice-2: no heading with that anchor",
		"a.md: b/gone.md#x: no such file",
	}, brokenLinks(t, root, "a.md"))
}

// TestSlug checks GitHub's anchors for the kinds of heading these pages have.
func TestSlug(t *testing.T) {
	f := func(heading, want string) {
		t.Helper()
		assert.Equal(t, want, slug(heading))
	}
	f("Which pool?", "which-pool")
	f("The default against the peer (failsafe-go)", "the-default-against-the-peer-failsafe-go")
	f("2026-11-27: the default (`auto`), judged only where the client side kept up", "2026-11-27-the-default-auto-judged-only-where-the-client-side-kept-up")
	f("A request's way through kvserver", "a-requests-way-through-kvserver")
	f("The row cache (`-row-cache-mb`)", "the-row-cache--row-cache-mb")
	f("Reads and writes: two admissions, writes by the store's health", "reads-and-writes-two-admissions-writes-by-the-stores-health")
	f("See [pools](pools.md) here", "see-pools-here")
}

// docPath is a page of docs/ named in Go source (a comment, a flag's help).
var docPath = regexp.MustCompile(`docs/[A-Za-z0-9_./-]+\.md`)

// TestDocPathsInCode holds every docs/*.md page that Go source under cmd/,
// internal/ and deploy/ names to a page that exists.
func TestDocPathsInCode(t *testing.T) {
	for _, top := range codeTops {
		err := filepath.WalkDir(filepath.Join("..", top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, page := range docPath.FindAllString(string(src), -1) {
				if _, err := os.Stat(filepath.Join("..", page)); err != nil {
					t.Errorf("%s names %s, which does not exist", path, page)
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
}
