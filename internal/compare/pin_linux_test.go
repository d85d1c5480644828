package compare

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPinLoaderBindsEveryThread runs pinLoader in a child process (it
// would pin this test binary otherwise) and checks that every thread of
// the child, and the scheduler, are left with the loader's one core.
func TestPinLoaderBindsEveryThread(t *testing.T) {
	if os.Getenv(pinChildEnv) == "1" {
		pinChild()
		return
	}
	if runtime.NumCPU() < 2 {
		t.Skip("-pin needs 2 cores")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPinLoaderBindsEveryThread$")
	cmd.Env = append(os.Environ(), pinChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)
	lines := strings.Fields(strings.TrimSpace(string(out)))
	var cpus []string
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "cpus="); ok {
			cpus = append(cpus, v)
		}
	}
	require.NotEmpty(t, cpus, "child printed no thread: %s", out)
	for _, c := range cpus {
		assert.Equal(t, "1", c, "a thread not bound to the loader's core")
	}
	assert.Contains(t, string(out), "gomaxprocs=1")
}

// pinChild pins itself and prints each thread's allowed CPUs.
func pinChild() {
	if err := pinLoader(); err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				os.Stdout.WriteString("cpus=" + strings.TrimSpace(v) + "\n")
			}
		}
	}
	os.Stdout.WriteString("gomaxprocs=" + strconv.Itoa(runtime.GOMAXPROCS(0)) + "\n")
	os.Exit(0)
}
