package loadgen

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/kvpool/kvpool/internal/api"
)

// spoolFile holds the run's records in their fixed binary form while the
// run goes; after it they are turned into results.bin and the spool is
// removed. Writing 56 bytes a record costs the loader next to nothing
// during the measurement; vegeta's gob encoding is done afterwards.
const spoolFile = ".results.spool"

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

func (s *spoolWriter) write(rc *record) error {
	b := s.buf[:]
	binary.LittleEndian.PutUint64(b[0:], rc.seq)
	binary.LittleEndian.PutUint64(b[8:], rc.key)
	binary.LittleEndian.PutUint64(b[16:], uint64(rc.intended))
	binary.LittleEndian.PutUint64(b[24:], uint64(rc.sent))
	binary.LittleEndian.PutUint64(b[32:], uint64(rc.latency))
	binary.LittleEndian.PutUint32(b[40:], rc.bytesOut)
	binary.LittleEndian.PutUint32(b[44:], rc.bytesIn)
	binary.LittleEndian.PutUint16(b[48:], rc.code)
	binary.LittleEndian.PutUint16(b[50:], rc.errIdx)
	b[52] = byte(rc.op)
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("cannot write %s: %w", s.path, err)
	}
	return nil
}

func (s *spoolWriter) close() error {
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", s.path, err)
	}
	return nil
}

// discard gives up on the spool after a write error.
func (s *spoolWriter) discard() {
	_ = s.f.Close()
	_ = os.Remove(s.path)
}

func decodeRecord(b []byte) record {
	return record{
		seq:      binary.LittleEndian.Uint64(b[0:]),
		key:      binary.LittleEndian.Uint64(b[8:]),
		intended: int64(binary.LittleEndian.Uint64(b[16:])),
		sent:     int64(binary.LittleEndian.Uint64(b[24:])),
		latency:  int64(binary.LittleEndian.Uint64(b[32:])),
		bytesOut: binary.LittleEndian.Uint32(b[40:]),
		bytesIn:  binary.LittleEndian.Uint32(b[44:]),
		code:     binary.LittleEndian.Uint16(b[48:]),
		errIdx:   binary.LittleEndian.Uint16(b[50:]),
		op:       api.Method(b[52]),
	}
}

// writeResultsBin turns the spool into results.bin, vegeta's gob format,
// one vegeta.Result per request in the order they were recorded (roughly
// by completion; `vegeta report` and `vegeta plot` do not need any order).
// Seq is the request's place in the schedule. What Timestamp and Latency
// mean is Config.VegetaLatency: by default vegeta's own meaning (the
// actual send and the latency from it); with LatencyCorrected the intended
// send time and the corrected latency.
func writeResultsBin(path, spoolPath string, res *Result) error {
	in, err := os.Open(spoolPath)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", spoolPath, err)
	}
	defer in.Close()
	r := bufio.NewReaderSize(in, 1<<20)
	t, _ := parseTarget(res.Config.Target, true)
	corrected := res.Config.VegetaLatency == LatencyCorrected
	return WriteFile(path, func(w *bufio.Writer) error {
		enc := vegeta.NewEncoder(w)
		var buf [spoolRecordSize]byte
		var vr vegeta.Result
		for {
			if _, err := io.ReadFull(r, buf[:]); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return fmt.Errorf("cannot read %s: %w", spoolPath, err)
			}
			rc := decodeRecord(buf[:])
			vr = vegeta.Result{
				Attack:    res.Config.Name,
				Seq:       rc.seq,
				Code:      rc.code,
				Timestamp: res.Start.Add(time.Duration(rc.sent)),
				Latency:   time.Duration(rc.latency),
				BytesOut:  uint64(rc.bytesOut),
				BytesIn:   uint64(rc.bytesIn),
				Method:    rc.op.String(),
				URL:       t.url(rc.key),
			}
			if corrected {
				vr.Timestamp = res.Start.Add(time.Duration(rc.intended))
				vr.Latency = time.Duration(rc.end() - rc.intended)
			}
			if rc.errIdx != 0 && int(rc.errIdx) <= len(res.errMsgs) {
				vr.Error = res.errMsgs[rc.errIdx-1]
			}
			if err := enc.Encode(&vr); err != nil {
				return err
			}
		}
	})
}

// WriteFile creates path and fills it through a buffered writer; the
// error names the file that could not be created or written.
func WriteFile(path string, fill func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot create %s: %w", path, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = fill(w)
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
