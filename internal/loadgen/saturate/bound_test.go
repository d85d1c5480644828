package saturate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBound(t *testing.T) {
	f := func(e Evidence, want bool, whyHas string) {
		t.Helper()
		got, why := Bound(e)
		assert.Equal(t, want, got, "%+v: %s", e, why)
		assert.Contains(t, why, whyHas, "%+v", e)
	}
	const unknown = -1
	fellBehind := func(loader, server float64) Evidence {
		return Evidence{FellBehind: true, LoaderCPUShare: loader, LoaderCPUs: 16, ServerCPUShare: server, ServerCPUs: 16}
	}
	overSLO := func(loader, server float64) Evidence {
		return Evidence{LoaderCPUShare: loader, LoaderCPUs: 2, ServerCPUShare: server, ServerCPUs: 4}
	}

	// The 28,000: a short step fell behind with both sides well
	// under 90 %: the server had room, the sends did not come.
	f(fellBehind(0.12, 0.35), true, "fell behind while the server used only 35% of its 16 CPUs (the loader at 12% of its 16 CPUs)")
	// The loader out of CPU, whatever failed.
	f(fellBehind(0.90, 0.50), true, "the loader used 90% of its 16 CPUs (the server at 50% of its 16 CPUs): it ran out of CPU")
	f(fellBehind(0.97, 0.99), true, "the loader used 97%")
	f(overSLO(0.95, 0.60), true, "the loader used 95% of its 2 CPUs")
	f(overSLO(0.95, unknown), true, "the loader used 95% of its 2 CPUs: it ran out of CPU")
	// The server's: fell behind with the server busy, or its answers failed.
	f(fellBehind(0.40, 0.90), false, "fell behind with the server at 90% of its 16 CPUs (the loader at 40% of its 16 CPUs): the server's limit")
	f(overSLO(0.89, 0.30), false, "the server's answers failed (the loader at 89% of its 2 CPUs, the server at 30% of its 4 CPUs)")
	f(overSLO(0.10, unknown), false, "the server's CPU unknown")
	// The server's share unknown: only the loader's own can decide.
	f(fellBehind(0.40, unknown), false, "the server's CPU is unknown, so only the loader's own share could show the loader's limit")
	f(fellBehind(0.92, unknown), true, "the loader used 92% of its 16 CPUs")
	// Neither known: read as the server's, as before this judgement.
	f(fellBehind(unknown, unknown), false, "the loader's CPU unknown")
	// Shared CPUs: the two shares add up. A 2-core machine running both
	// with 53 % + 40 % busy is full: the limit of both together, not the
	// loader's (the old lab's saturation on shared cores); with room left
	// it is the loader that did not send.
	shared := func(loader, server float64) Evidence {
		e := fellBehind(loader, server)
		e.LoaderCPUs, e.ServerCPUs, e.Shared = 2, 2, true
		return e
	}
	f(shared(0.40, 0.53), false, "fell behind with the 2 CPUs the server and the loader share full (the server at 53% of its 2 CPUs, the loader at 40% of its 2 CPUs): the limit of both together")
	f(shared(0.20, 0.35), true, "fell behind while the 2 CPUs the server and the loader share were only 55% busy")
	f(shared(0.91, 0.05), true, "the loader used 91% of its 2 CPUs")
	// A pass is never loader-bound, however busy the loader was.
	f(Evidence{Pass: true, LoaderCPUShare: 0.99, ServerCPUShare: 0.1}, false, "")
}
