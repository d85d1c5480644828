package api

// HeaderRequestTimeout is the request header in which a client tells
// kvserver how long it will still wait for the answer: its remaining time
// when it sent the request, in whole milliseconds, 1 to 8 digits
// (MaxRequestTimeoutMs), as Envoy's x-envoy-expected-rq-timeout-ms does.
// kvserver then drops the request, unrun (503, X-Shed-Reason: deadline),
// if that time has passed before its store operation begins; a malformed
// or non-positive value is answered 400.
const HeaderRequestTimeout = "X-Request-Timeout-Ms"

// MaxRequestTimeoutMs is the largest HeaderRequestTimeout value: 8 digits,
// about 27.8 hours, as gRPC's grpc-timeout allows.
const MaxRequestTimeoutMs = 99_999_999

// The other forms of a client's remaining time that kvserver reads, as
// proxies and RPC stacks send them. Where a request carries more than one
// form, the shortest time wins: the client waits no longer than that.
const (
	// HeaderEnvoyTimeout is Envoy's: whole milliseconds, as
	// HeaderRequestTimeout.
	HeaderEnvoyTimeout = "X-Envoy-Expected-Rq-Timeout-Ms"
	// HeaderGRPCTimeout is gRPC's: 1 to 8 digits and a unit, H (hours),
	// M (minutes), S, m (milliseconds), u (microseconds) or n
	// (nanoseconds): "250m" is 250 ms.
	HeaderGRPCTimeout = "Grpc-Timeout"
)
