package loadgen

import (
	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// The core speaks workload's types under its own names, so that the engine
// reads as before; the definitions live in package workload. A request's
// operation is the API's own method (api.Get, api.Put, api.Delete).
type Workload = workload.Workload

// Key distributions, as in package workload.
const (
	DistUniform = workload.DistUniform
	DistZipf    = workload.DistZipf
)

// picker draws one connection's requests (see workload.Picker).
type picker struct{ p *workload.Picker }

func newPicker(w Workload, seed uint64) *picker {
	return &picker{workload.NewPicker(w, seed)}
}

// next returns the operation and id of request seq.
func (p *picker) next(seq uint64) (api.Method, uint64) { return p.p.Next(seq) }

// AppendValue is workload.AppendValue: the value a PUT of id key carries.
func AppendValue(dst []byte, key uint64, size int) []byte {
	return workload.AppendValue(dst, key, size)
}

// Value is workload.Value.
func Value(key uint64, size int) []byte { return workload.Value(key, size) }
