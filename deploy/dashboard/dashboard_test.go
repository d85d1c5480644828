package dashboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The committed dashboard and its picture are what the generator writes
// now: a change to the Go definition without make dashboard fails here.
func TestCommittedFilesAreGenerated(t *testing.T) {
	f := func(path string, render func() ([]byte, error)) {
		t.Helper()
		want, err := render()
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.FromSlash(path))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s is not what deploy/dashboard generates: run make dashboard", path)
	}
	f("../grafana/kvserver.json", JSON)
	f("../../docs/observability-dashboard.svg", SVG)
}

// Panels do not overlap and stay within the 24 columns: the SDK places
// them only as well as the widths given add up.
func TestPanelsTileTheGrid(t *testing.T) {
	d, err := Build()
	require.NoError(t, err)
	taken := map[[2]uint32]string{}
	for _, p := range d.Panels {
		g := gridPos(p)
		require.NotNil(t, g)
		name := "row"
		if p.Panel != nil {
			name = deref(p.Panel.Title)
		}
		require.LessOrEqual(t, g.X+g.W, uint32(24), name)
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[[2]uint32{x, y}]; ok {
					t.Fatalf("%q overlaps %q at column %d, height %d", name, other, x, y)
				}
				taken[[2]uint32{x, y}] = name
			}
		}
	}
}

func TestQueriesCoverEveryPanel(t *testing.T) {
	qs, err := Queries()
	require.NoError(t, err)
	n := 0
	for _, r := range rows() {
		for _, p := range r.panels {
			n += len(p.queries)
		}
	}
	assert.Len(t, qs, n+1, "every panel query and the instance variable's")
	for _, q := range qs {
		assert.NotContains(t, Expand(q.Expr, "1m"), "$", q.Panel)
	}
}

func TestWrap(t *testing.T) {
	f := func(s string, width int, want ...string) {
		t.Helper()
		got := wrap(s, width)
		assert.Equal(t, want, got)
		assert.Equal(t, strings.ReplaceAll(s, " ", ""), strings.ReplaceAll(strings.Join(got, ""), " ", ""), "nothing lost")
	}
	f("short", 10, "short")
	f("sum by (code) (x)", 10, "sum by ", "(code) (x)")
	f("abcdefghijkl", 5, "abcde", "fghij", "kl")
	f("a,b,c,d", 4, "a,b,", "c,d")
}
