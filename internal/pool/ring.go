package pool

// ring is a circular deque of items that doubles when it is full. It is not
// safe for concurrent use: every owner guards it with a mutex. A bounded
// owner sizes it to its capacity once and checks the bound itself, so the
// ring never grows and a push allocates nothing.
//
// What must hold: len(buf) is a power of two; the items are buf[head],
// buf[head+1], ... (mod len(buf)), n of them, oldest first; every other slot
// is zero, so a finished task is not kept reachable by the ring.
type ring struct {
	buf  []item
	head int
	n    int
}

// newRing returns a ring holding size items before it first grows.
func newRing(size int) ring {
	c := 1
	for c < size {
		c <<= 1
	}
	return ring{buf: make([]item, c)}
}

func (r *ring) len() int { return r.n }

// front is the oldest item; the ring must not be empty.
func (r *ring) front() *item { return &r.buf[r.head] }

func (r *ring) pushBack(it item) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = it
	r.n++
}

// popFront removes the oldest item; the ring must not be empty.
func (r *ring) popFront() item {
	it := r.buf[r.head]
	r.buf[r.head] = item{}
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return it
}

// popBack removes the newest item; the ring must not be empty.
func (r *ring) popBack() item {
	r.n--
	i := (r.head + r.n) & (len(r.buf) - 1)
	it := r.buf[i]
	r.buf[i] = item{}
	return it
}

func (r *ring) grow() {
	buf := make([]item, 2*len(r.buf))
	k := copy(buf, r.buf[r.head:])
	copy(buf[k:], r.buf[:r.head])
	r.buf, r.head = buf, 0
}
