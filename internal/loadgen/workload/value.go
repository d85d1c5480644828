package workload

import "strconv"

// valuePoolSize is the length of the byte pattern values are cut from. A
// power of two, larger than any usual value, small enough to stay in cache.
const valuePoolSize = 1 << 16

// valuePool is a fixed pseudo-random printable pattern (splitmix64 from a
// constant seed, mapped to a 64-letter alphabet). It never changes between
// runs or builds: stores filled by `loadtest fill` are verified against it.
var valuePool = func() []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	b := make([]byte, valuePoolSize)
	state := uint64(0x6b7670_6f6f6c) // "kvpool"
	for i := range b {
		b[i] = alphabet[splitmix64(&state)&63]
	}
	return b
}()

// splitmix64 advances state and returns the next output of SplitMix64.
func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// AppendValue appends the value that fill and put workloads store under id
// key, size bytes long, to dst and returns the extended slice.
//
// The value is deterministic, so a later check can recompute and compare
// it: the decimal key and a colon, then the fixed pattern valuePool read
// from an offset derived from the key (wrapping around), all cut to size.
// Printable, so curl output is readable. It costs one short copy per value.
func AppendValue(dst []byte, key uint64, size int) []byte {
	start := len(dst)
	dst = strconv.AppendUint(dst, key, 10)
	dst = append(dst, ':')
	if len(dst)-start >= size {
		return dst[:start+size]
	}
	state := key
	off := int(splitmix64(&state) & (valuePoolSize - 1))
	for need := size - (len(dst) - start); need > 0; {
		chunk := valuePool[off:]
		if len(chunk) > need {
			chunk = chunk[:need]
		}
		dst = append(dst, chunk...)
		need -= len(chunk)
		off = 0
	}
	return dst
}

// Value returns AppendValue(nil, key, size): what a GET of id key must
// return after `loadtest fill -value-size size`.
func Value(key uint64, size int) []byte {
	return AppendValue(make([]byte, 0, size), key, size)
}
