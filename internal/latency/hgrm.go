package latency

import (
	"bytes"
	"fmt"
	"io"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// hgrmHeader is the column header HdrHistogram (Java) and wrk2 write above a
// percentile distribution. hdrhistogram-go writes the same four names
// separated by tabs; plotters match rows, not the header, but people diff
// our files against wrk2's, so we write wrk2's spelling.
const hgrmHeader = "       Value   Percentile   TotalCount 1/(1-Percentile)\n\n"

// ticksPerHalfDistance is wrk2's and HdrHistogram's default resolution of
// the distribution: 5 rows per halving of the distance to 100 %.
const ticksPerHalfDistance = 5

// WriteHGRM writes h as an HdrHistogram "percentile distribution" (.hgrm)
// text, values in milliseconds, as wrk2 prints it after "Detailed Percentile
// spectrum": the header, one "Value Percentile TotalCount 1/(1-Percentile)"
// row per step (the last at percentile 1.0 with "inf"), and the
// "#[Mean = ...]" / "#[Max = ...]" / "#[Buckets = ...]" footer. The rows and
// footer are hdrhistogram-go's PercentilesPrint; only the header line is
// rewritten.
func WriteHGRM(w io.Writer, h *hdrhistogram.Histogram) error {
	var buf bytes.Buffer
	if _, err := h.PercentilesPrint(&buf, ticksPerHalfDistance, 1000); err != nil {
		return fmt.Errorf("cannot format percentile distribution: %w", err)
	}
	out := buf.Bytes()
	// PercentilesPrint starts with its own header line and a blank line.
	if i := bytes.Index(out, []byte("\n\n")); i >= 0 && bytes.Contains(out[:i], []byte("Percentile")) {
		out = out[i+2:]
	}
	if _, err := io.WriteString(w, hgrmHeader); err != nil {
		return err
	}
	_, err := w.Write(out)
	return err
}
