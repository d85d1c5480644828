package api

// HeaderAttemptCount is the request header in which a client that retries
// tells which attempt of a request this is: 2 for the first retry, 3 for
// the second, and so on, as Envoy's x-envoy-attempt-count counts them
// (gRPC's grpc-previous-rpc-attempts carries the same, less one). A first
// try carries none. A server that sees it can shed retries before first
// tries; the load lab's clients send it where their model marks retries
// (-mark-retries).
const HeaderAttemptCount = "X-Envoy-Attempt-Count"

// HeaderPreviousAttempts is gRPC's form: how many attempts came before
// this one (0 for a first try). kvserver reads either: an attempt count
// above 1, or previous attempts above 0, mark a retry, which it sheds
// before first tries under overload.
const HeaderPreviousAttempts = "Grpc-Previous-Rpc-Attempts"
