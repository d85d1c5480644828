package result

import (
	"fmt"

	"github.com/kvpool/kvpool/internal/cpuset"
)

// Placement says where kvserver and the loader ran: "kvserver on CPUs
// 0-7 (8), loader on 8-15 (8 loops)", or that they shared.
func (e Environment) Placement() string {
	loops := ""
	if e.LoaderLoops > 0 {
		loops = " (" + Count(e.LoaderLoops, "loop") + ")"
	}
	switch {
	case e.Pinned:
		n := 0
		if s, err := cpuset.Parse(e.ServerCPUs); err == nil {
			n = s.Len()
		}
		if loops == "" {
			if s, err := cpuset.Parse(e.LoaderCPUs); err == nil {
				loops = " (" + Count(s.Len(), "CPU") + ")"
			}
		}
		return fmt.Sprintf("kvserver on CPUs %s (%d), loader on %s%s", e.ServerCPUs, n, e.LoaderCPUs, loops)
	case e.SharedCPUs != "":
		return fmt.Sprintf("kvserver and the loader share CPUs %s%s", e.SharedCPUs, loops)
	}
	return "none: kvserver and the loader share the cores"
}

// Count is n of what: "1 CPU", "8 loops".
func Count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
