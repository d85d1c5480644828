package result

import (
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
)

// Environment is what the report says about the machine a comparison ran on.
type Environment struct {
	CPUModel  string
	Cores     int
	GoVersion string // `go version`, else this binary's runtime.Version
	// KvserverVersion is the version label of kvserver_config_info.
	KvserverVersion string
	// Pinned: kvserver and the loader ran on CPU sets of their own,
	// ServerCPUs and LoaderCPUs (cpu lists). Where they shared,
	// SharedCPUs is this process's affinity set. CPUsHow says how the
	// sets were chosen.
	Pinned     bool
	ServerCPUs string `json:",omitempty"`
	LoaderCPUs string `json:",omitempty"`
	SharedCPUs string `json:",omitempty"`
	CPUsHow    string `json:",omitempty"`
	// LoaderLoops is how many event loops the loader ran (its runs'
	// Result.Loops, the most of them); LoaderUnpinned, where a run asked
	// to pin the loader could not, why (Result.Unpinned).
	LoaderLoops    int    `json:",omitempty"`
	LoaderUnpinned string `json:",omitempty"`
	LoadStart      string // /proc/loadavg's first three fields
	LoadEnd        string
	Started        time.Time
	Finished       time.Time
}

// ServerSize is how many CPUs kvserver's set had: its list's, the
// shared set's, or where neither was recorded, the machine's.
func (e Environment) ServerSize() int {
	for _, list := range []string{e.ServerCPUs, e.SharedCPUs} {
		if s, err := cpuset.Parse(list); err == nil {
			return s.Len()
		}
	}
	return max(e.Cores, 1)
}

// SecondPoint is one second of a step.
type SecondPoint struct {
	Second int // since the step's start
	P99    time.Duration
	Served int64
	Shed   int64
}

// ProfileSet is one pool's profiles and what the report shows of them.
type ProfileSet struct {
	Variant string
	// Files maps a kind (cpu, mutex, ...) to its .pb.gz, relative to the
	// report's folder.
	Files map[string]string
	// Errors maps a kind to why it was not captured.
	Errors map[string]string
	// Diffs maps cpu and mutex to the table `go tool pprof -top
	// -diff_base=<direct's>` prints (pprofdiff.Top).
	Diffs    map[string]string
	DiffErrs map[string]string
	// SVG is the CPU call graph, relative to the report's folder ("" with
	// SVGNote saying why).
	SVG     string
	SVGNote string
}
