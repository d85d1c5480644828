package result

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kvpool/kvpool/internal/compare/plan"
)

// FloorFile is a floor's record in its report folder; FloorVersion its
// schema's version.
const (
	FloorFile    = "floor.json"
	FloorVersion = 1
)

// Floor is what `loadtest floor` measured: per server CPU count the
// paired rounds of every store state and workload.
type Floor struct {
	Version    int
	Options    plan.Floor
	LoaderCPUs string // Options.LoaderCPUs
	LoaderCPUN int    // their count
	// LoaderBusy is the loader's CPU share from which a round was
	// loader-bound (saturate.Busy when it ran).
	LoaderBusy  float64
	Counts      []*FloorCount
	Interrupted bool `json:",omitempty"`
}

// FloorCount is the run on one set of server CPUs.
type FloorCount struct {
	ServerCPUs string
	CPUs       int // their count
	Workloads  []*FloorWorkload
}

// FloorWorkload is one store state and workload's rounds: PairedRun's
// Base are the base's, its Variant kvserver's.
type FloorWorkload struct {
	State, Workload string
	PairedRun
	// Failed are each round's requests that failed or were answered
	// other than 200, 201 or 404: the base's, kvserver's.
	Failed  [2][]int64
	Profile string `json:",omitempty"` // kvserver's CPU profile over one more round
}

// SaveFloor writes f to dir's floor.json as FloorVersion.
func SaveFloor(dir string, f *Floor) error {
	f.Version = FloorVersion
	b, err := json.MarshalIndent(f, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, FloorFile), append(b, '\n'), 0o644)
	}
	return err
}

// LoadFloor reads dir's floor.json.
func LoadFloor(dir string) (*Floor, error) {
	b, err := os.ReadFile(filepath.Join(dir, FloorFile))
	f := &Floor{}
	if err == nil {
		err = json.Unmarshal(b, f)
	}
	if err == nil && f.Version != FloorVersion {
		err = fmt.Errorf("version %d; this build reads %d", f.Version, FloorVersion)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the floor in %s: %w", dir, err)
	}
	return f, nil
}
