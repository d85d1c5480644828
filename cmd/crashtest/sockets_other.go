//go:build !linux

package main

import (
	"errors"
	"net"
)

// readConnState: only Linux shows another process's socket queues
// (/proc/net/tcp), which the drain check waits on.
func readConnState(net.Conn) (tcpState, error) {
	return tcpState{}, errors.New("the drain check reads /proc/net/tcp: run it on Linux")
}
