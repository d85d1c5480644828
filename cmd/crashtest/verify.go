package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// readBack is what reading keys back found.
type readBack struct {
	checked int
	exact   int      // present with exactly the derived value
	missing []string // 404
	wrong   []string // present with any other value: corruption
}

// verify GETs every key from base with n readers and sorts each into
// exact, missing or wrong. A transport error or an answer other than 200
// or 404 is an error: then nothing can be concluded.
func verify(ctx context.Context, client *http.Client, base string, keys []string, n int) (readBack, error) {
	var (
		mu   sync.Mutex
		rb   = readBack{checked: len(keys)}
		next atomic.Int64
		errs = make(chan error, n)
		wg   sync.WaitGroup
	)
	for range n {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(keys) || ctx.Err() != nil {
					return
				}
				key := keys[i]
				code, body, err := get(ctx, client, base, key)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				switch {
				case code == http.StatusNotFound:
					rb.missing = append(rb.missing, key)
				case code == http.StatusOK && bytes.Equal(body, valueOf(key)):
					rb.exact++
				case code == http.StatusOK:
					rb.wrong = append(rb.wrong, key)
				default:
					mu.Unlock()
					errs <- fmt.Errorf("GET %s: answered %d %q", key, code, body)
					return
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return rb, fmt.Errorf("cannot read the keys back: %w", err)
	}
	return rb, ctx.Err()
}

func get(ctx context.Context, client *http.Client, base, key string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v0/entity?id="+key, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}
