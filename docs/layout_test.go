// Package docs holds no code: its test checks that the pages' claims about
// the source tree still hold.
package docs

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// codeTops are the top-level folders whose packages the layout lists,
// each with every Go package below it.
var codeTops = []string{"cmd", "internal", "deploy"}

// listedFolders are the folders architecture.md's code blocks list: a
// line of a ``` block whose first word ends in "/" names one (a file
// such as cmd/loadtest/compare.go is a file of a listed folder, not a
// folder), and the rest of the line says what it holds.
func listedFolders(t *testing.T, page string) map[string]string {
	t.Helper()
	f, err := os.Open(page)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		fields := strings.Fields(line)
		if !in || len(fields) == 0 || !strings.HasSuffix(fields[0], "/") {
			continue
		}
		out[strings.TrimSuffix(fields[0], "/")] = strings.Join(fields[1:], " ")
	}
	require.NoError(t, sc.Err())
	return out
}

// listedPackages are the listed folders under cmd/, internal/ or deploy/
// (deploy itself included): each must be a Go package.
func listedPackages(t *testing.T, page string) []string {
	t.Helper()
	var out []string
	for p := range listedFolders(t, page) {
		top, _, _ := strings.Cut(p, "/")
		if slices.Contains(codeTops, top) && (p != top || top == "deploy") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// goPackages are the folders under cmd/, internal/ and deploy/ (and
// deploy itself) that hold Go files other than tests, relative to root.
func goPackages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, top := range codeTops {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			name := d.Name()
			if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				return nil
			}
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(out, rel) {
				out = append(out, rel)
			}
			return nil
		})
		require.NoError(t, err)
	}
	return out
}

// differ fails the test once for each of want that have lacks (missing,
// with the name for %s) and each of have that want lacks (extra).
func differ(t *testing.T, want, have []string, missing, extra string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(have, w) {
			t.Errorf(missing, w)
		}
	}
	for _, h := range have {
		if !slices.Contains(want, h) {
			t.Errorf(extra, h)
		}
	}
}

// TestArchitectureLayout holds architecture.md's layout to the tree: every
// folder it lists under cmd/, internal/ or deploy/ is a package, and every
// package there is listed.
func TestArchitectureLayout(t *testing.T) {
	listed := listedPackages(t, "architecture.md")
	require.NotEmpty(t, listed, "architecture.md lists no folder")
	differ(t, goPackages(t, ".."), listed,
		"package %s is missing from architecture.md's layout: add a line for it",
		"architecture.md lists %s/, which holds no Go package: drop it or correct its path")
}

// TestListedPackages checks the reading of a page on a small one.
func TestListedPackages(t *testing.T) {
	page := filepath.Join(t.TempDir(), "page.md")
	require.NoError(t, os.WriteFile(page, []byte("internal/outside/ not in a block\n"+
		"```\ncmd/tool/       the tool\ncmd/tool/main.go  a file\ninternal/a/b/  b\n  internal/c/  indented\ndocs/  not code\n"+
		"deploy/  ops\ndeploy/x/  x\n.ci/  ci\n```\n"), 0o644))
	assert.Equal(t, []string{"cmd/tool", "deploy", "deploy/x", "internal/a/b", "internal/c"}, listedPackages(t, page))
	assert.Equal(t, map[string]string{"cmd/tool": "the tool", "internal/a/b": "b", "internal/c": "indented",
		"docs": "not code", "deploy": "ops", "deploy/x": "x", ".ci": "ci"}, listedFolders(t, page))
}

// topFolders are the repository's top-level folders that git tracks files
// in; where git cannot tell (no git, or a copy without .git), the folders
// at root but .git and those .gitignore names as /NAME/.
func topFolders(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	if files, err := exec.Command("git", "-C", root, "ls-files").Output(); err == nil && len(files) > 0 {
		for f := range strings.SplitSeq(strings.TrimSpace(string(files)), "\n") {
			if top, _, ok := strings.Cut(f, "/"); ok && !slices.Contains(out, top) {
				out = append(out, top)
			}
		}
		slices.Sort(out)
		return out
	}
	ignore, _ := os.ReadFile(filepath.Join(root, ".gitignore"))
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" && !strings.Contains("\n"+string(ignore), "\n/"+e.Name()+"/") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestArchitectureTopFolders holds architecture.md's layout to every
// top-level folder of the repository: a line for it, or for a folder
// below it (cmd/kvserver/ names cmd/).
func TestArchitectureTopFolders(t *testing.T) {
	named := map[string]bool{}
	for p := range listedFolders(t, "architecture.md") {
		top, _, _ := strings.Cut(p, "/")
		named[top] = true
	}
	tops := topFolders(t, "..")
	require.NotEmpty(t, tops)
	for _, top := range tops {
		if !named[top] {
			t.Errorf("top-level folder %s/ is missing from architecture.md's layout: add a line for it", top)
		}
	}
}

// subcommandName is an entry of cmd/loadtest's subcommands table.
var subcommandName = regexp.MustCompile(`(?m)^\s*\{"([a-z-]+)", "`)

// loadtestSubcommands are the names cmd/loadtest/main.go dispatches on,
// read from its subcommands table.
func loadtestSubcommands(t *testing.T, mainGo string) []string {
	t.Helper()
	src, err := os.ReadFile(mainGo)
	require.NoError(t, err)
	table := string(src)
	start := strings.Index(table, "var subcommands = ")
	require.GreaterOrEqual(t, start, 0, "%s has no subcommands table", mainGo)
	table = table[start:]
	table = table[:strings.Index(table, "\n}\n")]
	var out []string
	for _, m := range subcommandName.FindAllStringSubmatch(table, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestArchitectureSubcommands holds the layout's cmd/loadtest/ line,
// "attack | saturate | ...", to the subcommands loadtest dispatches on.
func TestArchitectureSubcommands(t *testing.T) {
	subs := loadtestSubcommands(t, "../cmd/loadtest/main.go")
	require.Contains(t, subs, "attack", "the subcommands table was not read")
	line, ok := listedFolders(t, "architecture.md")["cmd/loadtest"]
	require.True(t, ok, "architecture.md's layout has no cmd/loadtest/ line")
	differ(t, subs, strings.Split(line, " | "),
		"loadtest %s is missing from architecture.md's cmd/loadtest/ line",
		"architecture.md's cmd/loadtest/ line names %q, which loadtest does not dispatch on")
}
