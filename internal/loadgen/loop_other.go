//go:build !linux

package loadgen

import (
	"context"
	"errors"
)

// evloop exists on Linux only; elsewhere the open model runs on the
// portable engine (a goroutine per connection).
type evloop struct{}

func newEventLoop(*fastEngine) (*evloop, error) {
	return nil, errors.New("no event loop on this platform")
}

func (*evloop) connect(*conn) error { return errors.New("no event loop on this platform") }
func (*evloop) run(context.Context) {}
func (*evloop) close()              {}
