package render

import (
	"os/exec"
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
