package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/kvpool/kvpool/internal/api"
)

// Target is a parsed Config.Target.
type Target struct {
	base string // scheme://host:port plus any path prefix, no trailing slash
	Host string // host:port, for dialing and the Host header
	Path string // path prefix + api.PathEntity
}

// URL returns the full URL of the request for id key.
func (t Target) URL(key uint64) string {
	return fmt.Sprintf("%s%s?id=%d", t.base, api.PathEntity, key)
}

// ParseTarget checks s is a plain-HTTP URL with a host and port, and, unless
// allowRemote, that the host is a loopback address: the lab loads the
// machine it runs on, and a typo must never turn it on someone else.
func ParseTarget(s string, allowRemote bool) (Target, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return Target{}, fmt.Errorf("-target %q is not an http://host:port URL", s)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	if !allowRemote && !IsLoopback(u.Hostname()) {
		return Target{}, fmt.Errorf("-target %q is not a loopback address; the load lab only loads this machine (pass -allow-remote if you really mean it)", s)
	}
	prefix := strings.TrimRight(u.Path, "/")
	return Target{base: u.Scheme + "://" + u.Host + prefix, Host: host, Path: prefix + api.PathEntity}, nil
}

// IsLoopback tells whether host h (a name or an address) is this machine:
// localhost or a loopback address.
func IsLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
