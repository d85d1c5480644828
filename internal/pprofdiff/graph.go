package pprofdiff

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"
)

// topFunc identifies a row: pprof's graph.NodeInfo at function
// granularity, where addresses, files and lines are gone.
type topFunc struct {
	name      string
	startLine int64  // of a nameless function
	objfile   string // for a nameless function or a location without one
}

func funcOf(l *profile.Location, line profile.Line) topFunc {
	var objfile string
	if l.Mapping != nil {
		objfile = l.Mapping.File
	}
	if line.Function == nil {
		return topFunc{objfile: objfile}
	}
	if line.Function.Name == "" {
		return topFunc{startLine: line.Function.StartLine, objfile: objfile}
	}
	return topFunc{name: line.Function.Name}
}

func (f topFunc) printable() string {
	switch {
	case f.name != "":
		return f.name
	case f.objfile != "":
		return "[" + filepath.Base(f.objfile) + "]"
	default:
		return "<unknown>"
	}
}

// topNode is a function's flat and cumulative value, and its callers.
type topNode struct {
	fn        topFunc
	flat, cum int64
	in        map[*topNode]*topEdge
}

// topEdge is a call's summed value; inline while every sample across it
// had the callee inlined into the caller.
type topEdge struct {
	weight int64
	inline bool
}

// inlineLabel is the row's suffix: " (inline)" where every call that
// remains into the function was inlined, " (partial-inline)" where some
// were.
func (n *topNode) inlineLabel() string {
	var inline, called bool
	for _, e := range n.in {
		if e.inline {
			inline = true
		} else {
			called = true
		}
	}
	switch {
	case inline && called:
		return " (partial-inline)"
	case inline:
		return " (inline)"
	}
	return ""
}

// topGraph is pprof's call graph of p (internal/graph's newGraph), one
// node per function with a nonzero value. With kept non-nil only those
// functions get nodes: a stack's frames outside it are skipped, and a
// sample whose leaf is one of them adds no flat value.
func topGraph(p *profile.Profile, idx int, kept map[topFunc]bool) []*topNode {
	nodes := map[topFunc]*topNode{}
	locNodes := make(map[uint64][]*topNode, len(p.Location))
	for _, l := range p.Location {
		lines := l.Line
		if len(lines) == 0 {
			lines = []profile.Line{{}}
		}
		ns := make([]*topNode, len(lines))
		for i, line := range lines {
			f := funcOf(l, line)
			if kept != nil && !kept[f] {
				continue
			}
			if nodes[f] == nil {
				nodes[f] = &topNode{fn: f, in: map[*topNode]*topEdge{}}
			}
			ns[i] = nodes[f]
		}
		locNodes[l.ID] = ns
	}
	type call struct{ from, to *topNode }
	seenNode := map[*topNode]bool{}
	seenCall := map[call]bool{}
	for _, s := range p.Sample {
		w := s.Value[idx]
		if w == 0 {
			continue
		}
		clear(seenNode)
		clear(seenCall)
		var parent *topNode
		skipped := false
		// From the root down; a location's lines run from the inlined
		// leaf to the function it was inlined into.
		for i := len(s.Location) - 1; i >= 0; i-- {
			ns := locNodes[s.Location[i].ID]
			for j := len(ns) - 1; j >= 0; j-- {
				n := ns[j]
				if n == nil {
					skipped = true
					continue
				}
				if !seenNode[n] {
					seenNode[n] = true
					n.cum += w
				}
				if c := (call{parent, n}); parent != nil && n != parent && !seenCall[c] {
					seenCall[c] = true
					e := n.in[parent]
					if e == nil {
						e = &topEdge{inline: true}
						n.in[parent] = e
					}
					e.weight += w
					e.inline = e.inline && j != len(ns)-1
				}
				parent = n
				skipped = false
			}
		}
		if parent != nil && !skipped {
			parent.flat += w
		}
	}
	g := make([]*topNode, 0, len(nodes))
	for _, n := range nodes {
		if n.flat != 0 || n.cum != 0 {
			g = append(g, n)
		}
	}
	return g
}

// compareTopNodes is pprof's flat order: by |flat| descending, then by
// name. (pprof leaves two rows of the same name, nameless functions of one
// binary, in whatever order its sort leaves them; here they go by |cum|,
// then by what tells them apart.)
func compareTopNodes(a, b *topNode) int {
	if c := cmp.Compare(abs64(b.flat), abs64(a.flat)); c != 0 {
		return c
	}
	if c := strings.Compare(a.fn.printable(), b.fn.printable()); c != 0 {
		return c
	}
	if c := cmp.Compare(abs64(b.cum), abs64(a.cum)); c != 0 {
		return c
	}
	return strings.Compare(fmt.Sprint(a.fn), fmt.Sprint(b.fn))
}
