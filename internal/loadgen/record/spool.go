package record

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/config"
)

// SpoolFile holds the run's records in their fixed binary form while the
// run goes; after it they are turned into results.bin and the spool is
// removed. Writing 56 bytes a record costs the loader next to nothing
// during the measurement; vegeta's gob encoding is done afterwards.
const SpoolFile = ".results.spool"

const spoolRecordSize = 56

type spoolWriter struct {
	path string
	f    *os.File
	w    *bufio.Writer
	buf  [spoolRecordSize]byte
}

func createSpool(path string) (*spoolWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", path, err)
	}
	return &spoolWriter{path: path, f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (s *spoolWriter) write(rc *Record) error {
	b := s.buf[:]
	binary.LittleEndian.PutUint64(b[0:], rc.Seq)
	binary.LittleEndian.PutUint64(b[8:], rc.Key)
	binary.LittleEndian.PutUint64(b[16:], uint64(rc.Intended))
	binary.LittleEndian.PutUint64(b[24:], uint64(rc.Sent))
	binary.LittleEndian.PutUint64(b[32:], uint64(rc.Latency))
	binary.LittleEndian.PutUint32(b[40:], rc.bytesOut)
	binary.LittleEndian.PutUint32(b[44:], rc.bytesIn)
	binary.LittleEndian.PutUint16(b[48:], rc.Code)
	binary.LittleEndian.PutUint16(b[50:], rc.errIdx)
	b[52] = byte(rc.op)
	b[53] = rc.Attempt
	b[54] = rc.Flags
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("cannot write %s: %w", s.path, err)
	}
	return nil
}

func (s *spoolWriter) close() error { return closeFile(s.path, s.f, s.w, nil) }

// discard gives up on the spool after a write error.
func (s *spoolWriter) discard() {
	_ = s.f.Close()
	_ = os.Remove(s.path)
}

// spoolReader reads a spool's records.
type spoolReader struct {
	r *bufio.Reader
	b [spoolRecordSize]byte
}

// next reads the next record; ok is false at the spool's end.
func (s *spoolReader) next() (rec Record, ok bool, err error) {
	b := s.b[:]
	if _, err := io.ReadFull(s.r, b); err != nil {
		if errors.Is(err, io.EOF) {
			return rec, false, nil
		}
		return rec, false, err
	}
	return Record{
		Seq:      binary.LittleEndian.Uint64(b[0:]),
		Key:      binary.LittleEndian.Uint64(b[8:]),
		Intended: int64(binary.LittleEndian.Uint64(b[16:])),
		Sent:     int64(binary.LittleEndian.Uint64(b[24:])),
		Latency:  int64(binary.LittleEndian.Uint64(b[32:])),
		bytesOut: binary.LittleEndian.Uint32(b[40:]),
		bytesIn:  binary.LittleEndian.Uint32(b[44:]),
		Code:     binary.LittleEndian.Uint16(b[48:]),
		errIdx:   binary.LittleEndian.Uint16(b[50:]),
		op:       api.Method(b[52]),
		Attempt:  b[53],
		Flags:    b[54],
	}, true, nil
}

// writeResultsBin turns the spool into results.bin, vegeta's gob format,
// one vegeta.Result per request, in the order of the schedule (Seq, the
// request's place in it; the spool holds them roughly by completion):
// `vegeta plot` reads a run's results by Seq and refuses timestamps that
// go back in time along it. What Timestamp and Latency mean is
// Config.VegetaLatency: by default vegeta's own meaning (the actual send
// and the latency from it), except that a request sent before one of a
// lower Seq (by another event loop, at most a quantum apart, or a re-send
// after the server closed a connection) is stamped with that one's time,
// so that timestamps never go back; with LatencyCorrected the intended
// send time, which never does, and the corrected latency.
func writeResultsBin(path, spoolPath string, res *Result) error {
	records, cleanup, err := sortSpool(spoolPath)
	defer cleanup()
	if err != nil {
		return err
	}
	t, _ := config.ParseTarget(res.Config.Target, true)
	corrected := res.Config.VegetaLatency == config.LatencyCorrected
	return WriteFile(path, func(w *bufio.Writer) error {
		enc := vegeta.NewEncoder(w)
		var vr vegeta.Result
		var last time.Time
		for {
			rc, ok, err := records()
			if err != nil || !ok {
				return err
			}
			vr = vegeta.Result{
				Attack:    res.Config.Name,
				Seq:       rc.Seq,
				Code:      rc.Code,
				Timestamp: res.Start.Add(time.Duration(rc.Sent)),
				Latency:   time.Duration(rc.Latency),
				BytesOut:  uint64(rc.bytesOut),
				BytesIn:   uint64(rc.bytesIn),
				Method:    rc.op.String(),
				URL:       t.URL(rc.Key),
			}
			if corrected {
				vr.Timestamp = res.Start.Add(time.Duration(rc.Intended))
				vr.Latency = time.Duration(rc.End() - rc.Intended)
			}
			if vr.Timestamp.Before(last) {
				vr.Timestamp = last
			}
			last = vr.Timestamp
			if rc.errIdx != 0 && int(rc.errIdx) <= len(res.errMsgs) {
				vr.Error = res.errMsgs[rc.errIdx-1]
			}
			if err := enc.Encode(&vr); err != nil {
				return err
			}
		}
	})
}

// sortRunRecords is how many records sortSpool sorts in memory at once
// (about 56 MiB): a longer spool is sorted in runs of this many, each
// written beside it, and the runs are merged with what is left, so that
// memory stays flat however long the run was.
var sortRunRecords = 1 << 20

// sortSpool returns the spool's records in Seq order, one per call of
// next (ok false after the last). cleanup removes the sorted runs it
// wrote beside the spool; call it once done, also after an error.
func sortSpool(spoolPath string) (next func() (Record, bool, error), cleanup func(), err error) {
	var runs []string
	var files []*os.File
	cleanup = func() {
		for _, f := range files {
			_ = f.Close()
		}
		for _, r := range runs {
			_ = os.Remove(r)
		}
	}
	in, err := os.Open(spoolPath)
	if err != nil {
		return nil, cleanup, fmt.Errorf("cannot read %s: %w", spoolPath, err)
	}
	defer in.Close()
	r := &spoolReader{r: bufio.NewReaderSize(in, 1<<20)}
	buf := make([]Record, 0, min(sortRunRecords, 1<<16))
	for {
		rec, ok, err := r.next()
		if err != nil {
			return nil, cleanup, fmt.Errorf("cannot read %s: %w", spoolPath, err)
		}
		if !ok {
			break
		}
		if buf = append(buf, rec); len(buf) == sortRunRecords {
			runs = append(runs, fmt.Sprintf("%s.%d", spoolPath, len(runs)))
			if err := writeRun(runs[len(runs)-1], buf); err != nil {
				return nil, cleanup, err
			}
			buf = buf[:0]
		}
	}
	// The runs are merged with what is left in buf: the smallest head of
	// them each time.
	type head struct {
		rec  Record
		next func() (Record, bool, error)
	}
	var heads []head
	add := func(next func() (Record, bool, error)) error {
		rec, ok, err := next()
		if ok {
			heads = append(heads, head{rec, next})
		}
		return err
	}
	for _, name := range runs {
		f, err := os.Open(name)
		if err == nil {
			files = append(files, f)
			err = add((&spoolReader{r: bufio.NewReaderSize(f, 64<<10)}).next)
		}
		if err != nil {
			return nil, cleanup, fmt.Errorf("cannot read %s: %w", name, err)
		}
	}
	slices.SortFunc(buf, bySeq)
	_ = add(func() (Record, bool, error) {
		if len(buf) == 0 {
			return Record{}, false, nil
		}
		rec := buf[0]
		buf = buf[1:]
		return rec, true, nil
	})
	return func() (Record, bool, error) {
		if len(heads) == 0 {
			return Record{}, false, nil
		}
		lowest := 0
		for i, h := range heads {
			if h.rec.Seq < heads[lowest].rec.Seq {
				lowest = i
			}
		}
		h := &heads[lowest]
		rec := h.rec
		next, ok, err := h.next()
		switch {
		case err != nil:
			return Record{}, false, fmt.Errorf("cannot read a sorted run of the spool: %w", err)
		case ok:
			h.rec = next
		default:
			heads = slices.Delete(heads, lowest, lowest+1)
		}
		return rec, true, nil
	}, cleanup, nil
}

func bySeq(x, y Record) int { return cmp.Compare(x.Seq, y.Seq) }

// writeRun sorts recs and writes them to path, in the spool's form.
func writeRun(path string, recs []Record) error {
	slices.SortFunc(recs, bySeq)
	w, err := createSpool(path)
	if err != nil {
		return err
	}
	for i := range recs {
		if err := w.write(&recs[i]); err != nil {
			w.discard()
			return err
		}
	}
	return w.close()
}

// WriteFile creates path and fills it through a buffered writer; the
// error names the file that could not be created or written.
func WriteFile(path string, fill func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot create %s: %w", path, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	return closeFile(path, f, w, fill(w))
}

// closeFile flushes w (unless err, what went wrong before, is set) and
// closes f; the error names path.
func closeFile(path string, f *os.File, w *bufio.Writer, err error) error {
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}
