// Package lincheck checks that kvserver keeps each key linearizable: it
// records the operations of many concurrent clients over HTTP (GET, PUT,
// DELETE of a few hot keys, each PUT with a value no other PUT writes),
// and checks each key's history against a register with porcupine
// (github.com/anishathalye/porcupine), where "absent" is one more value.
//
// The roles are apart, as in a load generator: a Runner drives the clients
// and records what they saw as Histories; Check judges Histories and
// writes porcupine's HTML view of any history that is not linearizable.
// Neither imports the server: they speak the /v0 API only.
//
// What a client could not learn is recorded as the etcd robustness tests
// do: a write that failed, timed out or was answered 503 may or may not
// have been applied, and may yet be, so it is recorded as never returning
// (its return after every other operation) and its client goes on under a
// new id; a read that failed is dropped.
package lincheck

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/anishathalye/porcupine"
)

// Kind is what an operation does.
type Kind uint8

const (
	Get    Kind = iota // GET: Output is the value read
	Put                // PUT of Input.Value
	Delete             // DELETE: the key becomes Absent
	// Set is no request: it stands for the state a history starts from
	// (what the previous history's last read found), a write before
	// every other operation of the history.
	Set
)

func (k Kind) String() string {
	switch k {
	case Get:
		return "get"
	case Put:
		return "put"
	case Delete:
		return "delete"
	case Set:
		return "set"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Values a key can hold in the model: Absent, or the number of the PUT that
// wrote it (from 1: each PUT of a run writes a value of its own, see
// valueOf). Corrupt is what a read is recorded as returning when its body
// is no value any PUT wrote (truncated, or two values mixed): no state
// holds it, so such a read makes its history illegal.
const (
	Absent  int64 = 0
	Corrupt int64 = -1
)

// Input is an operation as a client sent it.
type Input struct {
	Kind  Kind
	Key   string
	Value int64 // Put, Set: the value written (Set: possibly Absent)
}

// Output is what a client got back: for a Get, the value read.
type Output struct {
	Value int64
}

// Model is a register per key, partitioned by key: a Get must read the
// value of the last Put, Delete or Set before it.
var Model = porcupine.Model{
	Partition: partitionByKey,
	Init:      func() any { return Absent },
	Step: func(state, input, output any) (bool, any) {
		v, in := state.(int64), input.(Input)
		switch in.Kind {
		case Get:
			return output.(Output).Value == v, v
		case Put, Set:
			return true, in.Value
		case Delete:
			return true, Absent
		}
		return false, v
	},
	Hash: func(state any) uint64 { return uint64(state.(int64)) },
	DescribeOperation: func(input, output any) string {
		in := input.(Input)
		switch in.Kind {
		case Get:
			return fmt.Sprintf("get(%s) -> %s", in.Key, describe(output.(Output).Value))
		case Put:
			return fmt.Sprintf("put(%s, %s)", in.Key, describe(in.Value))
		case Set:
			return fmt.Sprintf("start(%s) = %s", in.Key, describe(in.Value))
		}
		return fmt.Sprintf("%s(%s)", in.Kind, in.Key)
	},
	DescribeState: func(state any) string { return describe(state.(int64)) },
	DescribeOperationMetadata: func(m any) string {
		s, _ := m.(string)
		return s
	},
}

func describe(v int64) string {
	switch v {
	case Absent:
		return "absent"
	case Corrupt:
		return "corrupt"
	}
	return "v" + strconv.FormatInt(v, 10)
}

// partitionByKey splits a history into one per key, in key order.
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	for _, op := range history {
		k := op.Input.(Input).Key
		byKey[k] = append(byKey[k], op)
	}
	keys := slices.Sorted(maps.Keys(byKey))
	out := make([][]porcupine.Operation, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}
