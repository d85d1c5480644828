//go:build !linux

package engine

import (
	"context"
	"errors"

	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// evloop exists on Linux only; elsewhere the open model runs on the
// portable engine (a goroutine per connection), and e.loop is always nil:
// p is there for fastEngine.lastQuantum to compile.
type evloop struct{ p schedule.Pacer }

func newEventLoop(*fastEngine) (*evloop, error) {
	return nil, errors.New("no event loop on this platform")
}

func (*evloop) connect(*conn) error { return errors.New("no event loop on this platform") }
func (*evloop) run(context.Context) {}
func (*evloop) close()              {}
