package compare

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPprofSVGSaysWhatIsMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := pprofSVG(t.Context(), "cpu.pb.gz", "cpu.svg")
	require.Error(t, err)
	assert.Contains(t, err.Error(), dotMissing)
	assert.Contains(t, err.Error(), "Go toolchain")

	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "dot"), []byte("#!/bin/sh\nexit 1\n"), 0o755))
	t.Setenv("PATH", bin)
	err = pprofSVG(t.Context(), "cpu.pb.gz", "cpu.svg")
	require.Error(t, err)
	assert.Equal(t, goMissing, err.Error())
}
