package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// writeLog is what concurrent writers learned about their PUTs.
type writeLog struct {
	// acked: answered 201. The server promised these are stored.
	acked []string
	// inDoubt: the request failed without an answer (the server died, or
	// closed the connection, mid-request). Either outcome is allowed, but a
	// value that is present must be exact.
	inDoubt []string
	// refused: answered, but not 201 (a 503, say): nothing promised.
	refused int
	// byCode counts the answers by status code.
	byCode map[int]int
}

func (w *writeLog) merge(o writeLog) {
	w.acked = append(w.acked, o.acked...)
	w.inDoubt = append(w.inDoubt, o.inDoubt...)
	w.refused += o.refused
	if w.byCode == nil {
		w.byCode = map[int]int{}
	}
	for c, n := range o.byCode {
		w.byCode[c] += n
	}
}

// newClient is an HTTP client that keeps one connection per worker.
func newClient(workers int) *http.Client {
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: workers, DisableCompression: true},
	}
}

// writeUntil runs n writers that PUT unique keys (keyOf) with their derived
// values (valueOf) to base, as fast as answers come, until ctx is done.
func writeUntil(ctx context.Context, client *http.Client, base, run string, cycle, n int) writeLog {
	logs := make([]writeLog, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			l := &logs[w]
			l.byCode = map[int]int{}
			for seq := 0; ctx.Err() == nil; seq++ {
				key := keyOf(run, cycle, w, seq)
				code, err := put(ctx, client, base, key)
				switch {
				case err != nil:
					l.inDoubt = append(l.inDoubt, key)
					// The server is going away; do not spin while it does.
					sleepCtx(ctx, 10*time.Millisecond)
				case code == http.StatusCreated:
					l.acked = append(l.acked, key)
				default:
					l.refused++
				}
				if err == nil {
					l.byCode[code]++
				}
			}
		})
	}
	wg.Wait()
	var all writeLog
	for _, l := range logs {
		all.merge(l)
	}
	return all
}

// put stores key's derived value and returns the status once the whole
// answer is read.
func put(ctx context.Context, client *http.Client, base, key string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "PUT", base+"/v0/entity?id="+key, bytes.NewReader(valueOf(key)))
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
