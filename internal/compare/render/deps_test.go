package render

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoMeasuringCode: the report and its analysis are written from
// compare.json alone; neither imports the runner, the harness or the
// loader, directly or through another package.
func TestNoMeasuringCode(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no `go` on PATH to list the imports: %v", err)
	}
	out, err := exec.Command("go", "list", "-deps", ".", "../analysis").Output()
	require.NoError(t, err)
	for _, pkg := range strings.Fields(string(out)) {
		measuring := strings.HasSuffix(pkg, "/internal/compare") || strings.Contains(pkg, "/internal/harness") || strings.Contains(pkg, "/internal/loadgen")
		assert.False(t, measuring, "render or analysis imports %s", pkg)
	}
	assert.Contains(t, string(out), "/internal/compare/analysis", "the list is of the packages asked for")
}

// TestFormatsOnly: render formats what analysis computed; it calls no
// function of analysis or verdict (it uses analysis's types), so that a
// figure or verdict the report shows has one place where it is derived.
func TestFormatsOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "analysis" || pkg.Name == "verdict") {
						t.Errorf("%s calls %s.%s: derive it in analysis.Analyze and read the field", name, pkg.Name, sel.Sel.Name)
					}
				}
			}
			return true
		})
	}
}
