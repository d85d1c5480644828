package saturate

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/serverstat"
)

// WatchServerCPU sets c.ServerCPU to read target's /metrics if a first
// reading works, and says what the steps will know of the server's CPU.
func (c *Config) WatchServerCPU(ctx context.Context, target string, loaderCPUs cpuset.Set) string {
	const rule = "a step is loader-bound when the loader used ≥ 90% of its CPUs, or fell behind while it had connections free and its own sends were late"
	_, cpus, err := serverstat.CPU(ctx, target)
	if err != nil {
		return fmt.Sprintf("server CPU: unknown (%v), shown for no step; %s", err, rule)
	}
	c.ServerCPU = func(ctx context.Context) (time.Duration, int, error) { return serverstat.CPU(ctx, target) }
	if c.Shared = sharesCPUs(target, loaderCPUs, cpus); c.Shared {
		return fmt.Sprintf("server CPU: read from its /metrics around and within each step (%d CPUs, which this loader shares: it runs on the same machine, neither pinned apart); %s",
			cpus, rule)
	}
	return fmt.Sprintf("server CPU: read from its /metrics around and within each step (%d CPUs); %s", cpus, rule)
}

// sharesCPUs guesses whether a server on target shares the loader's
// CPUs: it is on this machine (a loopback target), the loader is not
// pinned (-cpus) and may use every CPU, and the server's GOMAXPROCS is
// the machine's count, as a server not pinned to a subset has it. A server
// pinned apart (taskset, or -cpus for the loader) reads as not sharing.
func sharesCPUs(target string, loaderCPUs cpuset.Set, serverCPUs int) bool {
	u, err := url.Parse(target)
	if err != nil || !loaderCPUs.IsEmpty() || !config.IsLoopback(u.Hostname()) {
		return false
	}
	online, err := cpuset.Online()
	affinity, aerr := cpuset.Affinity()
	return err == nil && aerr == nil && affinity == online && serverCPUs == online.Len()
}
