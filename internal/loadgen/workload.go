package loadgen

import "github.com/kvpool/kvpool/internal/loadgen/workload"

// The core speaks workload's types under its own names, so that the engine
// reads as before; the definitions live in package workload.
type (
	Op       = workload.Op
	Workload = workload.Workload
)

// Operations and key distributions, as in package workload.
const (
	OpGet       = workload.OpGet
	OpPut       = workload.OpPut
	OpDelete    = workload.OpDelete
	DistUniform = workload.DistUniform
	DistZipf    = workload.DistZipf
)

// picker draws one connection's requests (see workload.Picker).
type picker struct{ p *workload.Picker }

func newPicker(w Workload, seed uint64) *picker {
	return &picker{workload.NewPicker(w, seed)}
}

// next returns the operation and id of request seq.
func (p *picker) next(seq uint64) (Op, uint64) { return p.p.Next(seq) }

// AppendValue is workload.AppendValue: the value a PUT of id key carries.
func AppendValue(dst []byte, key uint64, size int) []byte {
	return workload.AppendValue(dst, key, size)
}

// Value is workload.Value.
func Value(key uint64, size int) []byte { return workload.Value(key, size) }
