package harness

import (
	"os"
	"testing"

	"github.com/kvpool/kvpool/internal/harness/harnesstest"
)

// kvserverBin is the kvserver binary the tests run, built once by TestMain
// (with -race when this test is).
var kvserverBin string

func TestMain(m *testing.M) {
	os.Exit(harnesstest.RunWithKVServer(m, &kvserverBin, harnesstest.RaceEnabled))
}
