//go:build !unix

package record

// ProcessCPU is zero where getrusage is missing: the report then shows
// no CPU figure for the loader.
func ProcessCPU() CPUTime { return CPUTime{} }
