// Package api names the parts of kvserver's /v0 HTTP API that both sides
// of the wire speak of: its paths and the methods of /v0/entity. It is the
// contract, not the server: the load side may import it without reaching
// into the server's packages.
package api

// Paths the server answers.
const (
	PathEntity = "/v0/entity" // GET, PUT, DELETE ?id=KEY
	PathStatus = "/v0/status" // 200 OK once the store is open
)

// Method is a request's method as the API tells them apart: the three
// /v0/entity serves, any other one, and none at all.
type Method uint8

const (
	Get    Method = iota // read a value: 200 or 404
	Put                  // store a value: 201
	Delete               // remove a value: 202
	// Other is any method /v0/entity does not serve (405 there).
	Other
	// Unknown is a request whose method was never read: the connection
	// was answered (408, 431, 429, 503) before its request line was
	// complete.
	Unknown

	// NumMethods is the number of Method values, for tables indexed by one.
	NumMethods = int(Unknown) + 1
)

var methodNames = [NumMethods]string{"GET", "PUT", "DELETE", "other", "unknown"}

// String is the HTTP method for Get, Put and Delete, and "other" or
// "unknown" for the rest: the value of a metrics label.
func (m Method) String() string {
	if int(m) < NumMethods {
		return methodNames[m]
	}
	return "other"
}

// ParseMethod maps an HTTP method, as sent (methods are case-sensitive),
// to a Method; anything but GET, PUT and DELETE is Other. It does not
// allocate.
func ParseMethod(b []byte) Method {
	switch string(b) {
	case "GET":
		return Get
	case "PUT":
		return Put
	case "DELETE":
		return Delete
	}
	return Other
}
