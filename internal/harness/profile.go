package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Profile fetches GET /debug/pprof/<name>?seconds=N and saves it to path
// as served (gzip'd protobuf, what go tool pprof reads). name "cpu" is
// the CPU profile (/debug/pprof/profile), which needs seconds > 0; for
// allocs, heap, mutex, block and goroutine, seconds > 0 asks for the delta
// over those seconds, 0 for the totals since the start. The call takes
// about that many seconds. The file appears only once complete.
func (s *Server) Profile(ctx context.Context, name string, seconds int, path string) error {
	endpoint := name
	if name == "cpu" {
		endpoint = "profile"
		if seconds <= 0 {
			return fmt.Errorf("a CPU profile needs seconds > 0, got %d", seconds)
		}
	}
	u := s.URL + "/debug/pprof/" + url.PathEscape(endpoint)
	if seconds > 0 {
		u += "?seconds=" + strconv.Itoa(seconds)
	}
	// Bounded even if ctx is not: the profile's own length plus a margin.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(seconds)*time.Second+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot fetch the %s profile: %w", name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("cannot fetch the %s profile: %w", name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("cannot fetch the %s profile: GET %s answered %s: %s", name, u, resp.Status, bytes.TrimSpace(body))
	}
	// A profile is gzip'd; anything else (an HTML index, a text dump) is not one.
	if !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		return fmt.Errorf("GET %s did not answer a gzip'd profile (%d bytes starting %q); is %q a profile name?", u, len(body), body[:min(len(body), 40)], name)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".part-")
	if err != nil {
		return fmt.Errorf("cannot save the %s profile: %w", name, err)
	}
	defer os.Remove(tmp.Name()) // nothing left once renamed
	_, err = tmp.Write(body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("cannot save the %s profile: %w", name, err)
	}
	return nil
}
