package harness

import "sync"

// lineTail keeps the last lines written to it; safe for concurrent use.
type lineTail struct {
	mu    sync.Mutex
	lines []string // a ring of up to cap(lines) lines
	next  int      // where the next line goes once the ring is full
}

func newLineTail(n int) *lineTail { return &lineTail{lines: make([]string, 0, n)} }

func (t *lineTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) < cap(t.lines) {
		t.lines = append(t.lines, line)
		return
	}
	t.lines[t.next] = line
	t.next = (t.next + 1) % len(t.lines)
}

// last returns up to n of the newest lines, oldest first.
func (t *lineTail) last(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ordered := append(append([]string(nil), t.lines[t.next:]...), t.lines[:t.next]...)
	if n < len(ordered) {
		ordered = ordered[len(ordered)-n:]
	}
	return ordered
}
