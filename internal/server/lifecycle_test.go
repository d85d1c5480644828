package server

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newMemServer is a Server over an in-memory store, not yet serving.
func newMemServer(t *testing.T, mutate func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Pool = "fifo"
	cfg.Pcfg.Workers = 2
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := New(resolved(t, cfg), newMemStore(), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv
}

// serveResult runs Serve on its own goroutine and returns its result.
func serveResult(srv *Server, ln net.Listener) <-chan error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return served
}

// waitServed fails the test if Serve has not returned within 10 s: a
// Serve that missed its Shutdown would serve for ever.
func waitServed(t *testing.T, served <-chan error) error {
	t.Helper()
	select {
	case err := <-served:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Serve still running 10s after Shutdown")
		return nil
	}
}

// TestShutdownBeforeServe: a stop requested before Serve (a signal that
// lands while kvserver is starting) is not lost: Serve returns at once,
// having closed its listener, and serves nothing.
func TestShutdownBeforeServe(t *testing.T) {
	srv := newMemServer(t, nil)
	ln, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, srv.Shutdown(context.Background()))

	assert.NoError(t, waitServed(t, serveResult(srv, ln)))
	_, err = ln.Accept()
	assert.True(t, errors.Is(err, net.ErrClosed), "the listener is closed: %v", err)
	_, err = net.Dial("tcp", ln.Addr().String())
	assert.Error(t, err, "nothing listens any more")
}

// TestShutdownRacesServe: Shutdown and Serve called at the same moment,
// in either order, always end with Serve returned and nothing listening.
// Run under -race; nothing here sleeps.
func TestShutdownRacesServe(t *testing.T) {
	for i := range 50 {
		srv := newMemServer(t, nil)
		ln, err := Listen("127.0.0.1:0")
		require.NoError(t, err)

		var ready, both sync.WaitGroup
		ready.Add(2)
		both.Add(1)
		served := make(chan error, 1)
		stopped := make(chan error, 1)
		go func() { ready.Done(); both.Wait(); served <- srv.Serve(ln) }()
		go func() { ready.Done(); both.Wait(); stopped <- srv.Shutdown(context.Background()) }()
		ready.Wait()
		both.Done() // release both at once

		require.NoError(t, <-stopped, "round %d", i)
		require.NoError(t, waitServed(t, served), "round %d", i)
		_, err = ln.Accept()
		require.True(t, errors.Is(err, net.ErrClosed), "round %d: the listener is closed: %v", i, err)
	}
}

// TestShutdownTwice: a second Shutdown, and a Serve after both, are
// harmless.
func TestShutdownTwice(t *testing.T) {
	srv := newMemServer(t, nil)
	ln, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	served := serveResult(srv, ln)
	require.NoError(t, srv.Shutdown(context.Background()))
	require.NoError(t, waitServed(t, served))
	require.NoError(t, srv.Shutdown(context.Background()))

	ln2, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	assert.NoError(t, waitServed(t, serveResult(srv, ln2)))
}
