package main

import (
	"fmt"
	"net"
	"os"
)

// readConnState reads c's state from the kernel's socket table.
func readConnState(c net.Conn) (tcpState, error) {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return tcpState{}, fmt.Errorf("cannot read socket states: %w", err)
	}
	defer f.Close()
	return connState(f, c)
}
