package pool

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test or benchmark leaves a goroutine
// behind: every pool a test builds must be closed and its workers gone.
// Goroutines alive before the first test are not ours: ants starts two in
// its package init for its default pool.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.IgnoreCurrent()) }
