package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConnStateParse: the two ends of a connection are found by address in
// the socket table's text, whatever else it holds.
func TestConnStateParse(t *testing.T) {
	client := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 0xA001}
	server := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 0x4A3B}
	lo := fmt.Sprintf("%08X", binary.NativeEndian.Uint32([]byte{127, 0, 0, 1}))
	table := func(clientTx, serverRx, serverInode string) string {
		return "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
			"   0: " + lo + ":4A3B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000 100 0 0 10 0\n" +
			"   1: " + lo + ":A001 " + lo + ":4A3B 01 " + clientTx + ":00000000 00:00000000 00000000     0        0 222 1 0000 20 4 30 10 -1\n" +
			"   2: " + lo + ":4A3B " + lo + ":A001 01 00000000:" + serverRx + " 00:00000000 00000000     0        0 " + serverInode + " 1 0000 20 4 30 10 -1\n"
	}
	c := fakeConn{local: client, remote: server}
	f := func(text string, want tcpState) {
		t.Helper()
		got, err := connState(strings.NewReader(text), c)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	f(table("00000000", "00000000", "333"), tcpState{found: true, accepted: true})
	f(table("00000000", "0000002A", "0"), tcpState{found: true, unread: 42})
	f(table("00000010", "00000000", "333"), tcpState{found: true, accepted: true, unsent: 16})
	f(strings.Join(strings.Split(table("0", "0", "1"), "\n")[:2], "\n"), tcpState{})
	assert.True(t, tcpState{found: true, accepted: true}.served())
	assert.False(t, tcpState{found: true, accepted: true, unread: 1}.served())
	assert.False(t, tcpState{found: true, unread: 0}.served())

	_, err := connState(strings.NewReader(""), fakeConn{local: &net.UnixAddr{}, remote: server})
	assert.Error(t, err)
}

type fakeConn struct {
	net.Conn
	local, remote net.Addr
}

func (c fakeConn) LocalAddr() net.Addr  { return c.local }
func (c fakeConn) RemoteAddr() net.Addr { return c.remote }

// TestConnStateLive: against a real listener, a connection is not served
// while it waits in the backlog or its bytes wait unread, and is once the
// other side has accepted it and read them.
func TestConnStateLive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/net/tcp")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("hello"))
	require.NoError(t, err)

	ctx := context.Background()
	backlog := func(st tcpState) bool { return st.found && !st.accepted && st.unsent == 0 && st.unread == 5 }
	require.NoError(t, waitConn(ctx, c, 10*time.Second, "in the backlog with 5 bytes", backlog))

	sc, err := ln.Accept()
	require.NoError(t, err)
	defer sc.Close()
	unread := func(st tcpState) bool { return st.found && st.accepted && st.unread == 5 }
	require.NoError(t, waitConn(ctx, c, 10*time.Second, "accepted with 5 bytes unread", unread))
	st, err := readConnState(c)
	require.NoError(t, err)
	assert.False(t, st.served(), "%+v", st)

	_, err = io.ReadFull(sc, make([]byte, 5))
	require.NoError(t, err)
	require.NoError(t, waitConn(ctx, c, 10*time.Second, "read", tcpState.served))

	err = waitConn(ctx, c, 50*time.Millisecond, "never", func(tcpState) bool { return false })
	assert.ErrorContains(t, err, "never: not after 50ms")
}
