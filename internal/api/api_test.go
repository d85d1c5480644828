package api

import "testing"

func TestParseMethod(t *testing.T) {
	f := func(in string, want Method, wantLabel string) {
		t.Helper()
		got := ParseMethod([]byte(in))
		if got != want || got.String() != wantLabel {
			t.Errorf("ParseMethod(%q) = %v (%q), want %v (%q)", in, got, got.String(), want, wantLabel)
		}
	}
	f("GET", Get, "GET")
	f("PUT", Put, "PUT")
	f("DELETE", Delete, "DELETE")
	f("get", Other, "other") // methods are case-sensitive (RFC 9110 §9.1)
	f("POST", Other, "other")
	f("", Other, "other")
	if got := Method(200).String(); got != "other" {
		t.Errorf("out of range: %q, want other", got)
	}
	if Unknown.String() != "unknown" {
		t.Errorf("Unknown: %q", Unknown.String())
	}
}
