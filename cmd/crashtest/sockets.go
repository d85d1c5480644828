package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// tcpState is what the kernel's socket table says about one TCP connection
// made from this process: whether the server accepted it and how much it
// has not read yet.
type tcpState struct {
	found    bool // both ends are in the table
	accepted bool // the server's end belongs to a socket a process holds
	unsent   int  // bytes this end sent that the server's kernel has not acknowledged
	unread   int  // bytes that arrived at the server's end and its process has not read
}

// served reports whether the server has accepted the connection and read
// every byte sent on it.
func (s tcpState) served() bool { return s.found && s.accepted && s.unsent == 0 && s.unread == 0 }

// connState reads c's two ends from procNetTCP (/proc/net/tcp's format): a
// socket that waits in the listen backlog has inode 0 until accept(2)
// gives it to a process, and a socket's rx_queue counts the bytes its
// process has not read. Only IPv4 on loopback is looked for.
func connState(procNetTCP io.Reader, c net.Conn) (tcpState, error) {
	client, err := procAddr(c.LocalAddr())
	if err != nil {
		return tcpState{}, err
	}
	server, err := procAddr(c.RemoteAddr())
	if err != nil {
		return tcpState{}, err
	}
	var st tcpState
	var seenClient, seenServer bool
	sc := bufio.NewScanner(procNetTCP)
	for sc.Scan() {
		// sl local rem st tx_queue:rx_queue tr:when retrnsmt uid timeout inode ...
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] == "sl" {
			continue
		}
		queues := strings.SplitN(f[4], ":", 2)
		if len(queues) != 2 {
			return st, fmt.Errorf("cannot parse /proc/net/tcp queues %q", f[4])
		}
		tx, err1 := strconv.ParseInt(queues[0], 16, 64)
		rx, err2 := strconv.ParseInt(queues[1], 16, 64)
		if err1 != nil || err2 != nil {
			return st, fmt.Errorf("cannot parse /proc/net/tcp queues %q", f[4])
		}
		switch {
		case f[1] == client && f[2] == server:
			seenClient, st.unsent = true, int(tx)
		case f[1] == server && f[2] == client:
			seenServer, st.unread, st.accepted = true, int(rx), f[9] != "0"
		}
	}
	st.found = seenClient && seenServer
	return st, sc.Err()
}

// procAddr writes a TCP address as /proc/net/tcp does: the IPv4 address as
// the native-endian 32-bit number of its bytes, the port in hex.
func procAddr(a net.Addr) (string, error) {
	ta, ok := a.(*net.TCPAddr)
	var ip4 net.IP
	if ok {
		ip4 = ta.IP.To4()
	}
	if ip4 == nil {
		return "", fmt.Errorf("%v: only TCP over IPv4 is looked up in /proc/net/tcp", a)
	}
	return fmt.Sprintf("%08X:%04X", binary.NativeEndian.Uint32(ip4), ta.Port), nil
}

// waitConn polls c's state until ok says yes, for at most wait; the error
// says what the last state was.
func waitConn(ctx context.Context, c net.Conn, wait time.Duration, what string, ok func(tcpState) bool) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := readConnState(c)
		if err != nil {
			return err
		}
		if ok(st) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not after %v (socket state %+v)", what, wait, st)
		case <-tick.C:
		}
	}
}
