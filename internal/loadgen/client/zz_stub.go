// Temporary: the client package's behaviour lands from its own branch; this file goes with that merge.
package client

import "time"

type Client struct{ m Model }
type Outcome uint8

const (
	OK Outcome = iota
	Shed
	Timeout
	Error
)

type Refusal uint8

func New(m Model, seed uint64) *Client            { return &Client{m: m} }
func (c *Client) Send(now int64, retry bool) bool { return true }
func (c *Client) Done(now int64, attempt int, out Outcome, retryAfter time.Duration) (int64, bool, Refusal) {
	if out == OK || attempt >= c.m.Retries {
		return 0, false, 0
	}
	return now, true, 0
}
func (m Model) String() string { return "client model" }
