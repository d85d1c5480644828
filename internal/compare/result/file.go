package result

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// File is the comparison's name in its folder.
const File = "compare.json"

// Load reads dir's compare.json, of any version, brought to Version
// (upgrade).
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
	if err := c.upgrade(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Save writes c to dir's compare.json, indented, as Version.
func Save(dir string, c *Comparison) error {
	c.Version = Version
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, File), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w", File, err)
	}
	return nil
}
