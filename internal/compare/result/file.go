package result

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kvpool/kvpool/internal/compare/plan"
)

// File is the comparison's name in its folder.
const File = "compare.json"

// olderCriteria are the rules of the comparisons that did not record
// them: the saturation searches' 0.1 % errors and 90 % of the loader's
// CPUs.
var olderCriteria = Criteria{MaxErrorRate: 0.001, LoaderBusy: 0.9}

// Load reads dir's compare.json. A comparison written by an older
// loadtest reads as its run went: without options, those of its preset
// by default; without step lengths, the defaults of then; without a plan,
// the one its options make (with no step plan: each variant sized its
// own connections); without criteria, the rules of then. Fields it does
// not know (an older one's findings and chart list, which the report now
// derives) are ignored.
func Load(dir string) (*Comparison, error) {
	path := filepath.Join(dir, File)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the comparison to render: %w", err)
	}
	c := &Comparison{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Options.Preset == "" {
		c.Options = plan.DefaultOptions()
		c.Options.Preset = c.Preset
		c.Options.ApplyDefaults(false, false)
	}
	if c.Options.Timing == nil {
		t := c.Options.StepTiming()
		if c.Options.Quick {
			t.ProbeBaseline = plan.QuickProbeBefore
		}
		c.Options.Timing = &t
	}
	if c.Plan == nil {
		if c.Plan, err = plan.New(&c.Options, c.Env.ServerSize()); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if c.Criteria == (Criteria{}) {
		c.Criteria = olderCriteria
	}
	c.restateMetaLoaderChecks()
	c.restateBacklogs()
	return c, nil
}

// Save writes c to dir's compare.json, indented.
func Save(dir string, c *Comparison) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, File), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w", File, err)
	}
	return nil
}
