// Package docs holds no code: its test checks that the pages' claims about
// the source tree still hold.
package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listedPackages are the folders architecture.md's code blocks list: a
// line of a ``` block that starts with cmd/ or internal/ names one, by
// its first word (a folder ends in "/"; a file such as
// cmd/loadtest/compare.go is a file of a listed folder, not a folder).
func listedPackages(t *testing.T, page string) []string {
	t.Helper()
	f, err := os.Open(page)
	require.NoError(t, err)
	defer f.Close()
	var out []string
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
		if p := strings.TrimSuffix(fields[0], "/"); strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "internal/") {
			out = append(out, p)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// goPackages are the folders under cmd/ and internal/ that hold Go files
// other than tests, relative to root.
func goPackages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, top := range []string{"cmd", "internal"} {
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

// TestArchitectureLayout holds architecture.md's layout to the tree: every
// folder it lists is a package, and every package under cmd/ and
// internal/ is listed.
func TestArchitectureLayout(t *testing.T) {
	listed := listedPackages(t, "architecture.md")
	require.NotEmpty(t, listed, "architecture.md lists no folder")
	packages := goPackages(t, "..")
	for _, p := range listed {
		if !slices.Contains(packages, p) {
			t.Errorf("architecture.md lists %s/, which holds no Go package: drop it or correct its path", p)
		}
	}
	for _, p := range packages {
		if !slices.Contains(listed, p) {
			t.Errorf("package %s is missing from architecture.md's layout: add a line for it", p)
		}
	}
}

// TestListedPackages checks the reading of a page on a small one.
func TestListedPackages(t *testing.T) {
	page := filepath.Join(t.TempDir(), "page.md")
	require.NoError(t, os.WriteFile(page, []byte("internal/outside/ not in a block\n"+
		"```\ncmd/tool/       the tool\ncmd/tool/main.go  a file\ninternal/a/b/  b\n  internal/c/  indented\ndocs/  not code\n```\n"), 0o644))
	assert.Equal(t, []string{"cmd/tool", "internal/a/b", "internal/c"}, listedPackages(t, page))
}
