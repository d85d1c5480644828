// Package deploy holds what operators run beside kvserver: the Grafana
// dashboard (deploy/dashboard, generated into deploy/grafana) and the
// Prometheus scrape configuration and alert rules (deploy/prometheus),
// started locally by make observe.
//
// It has no code of its own; its tests check those files against the real
// thing: every PromQL expression parses with Prometheus' own parser and
// selects only series, and labels, that a live kvserver exports; the rule
// files pass Prometheus' rule checker; and, where the prometheus binary is
// installed, a real Prometheus scrapes a real kvserver and evaluates them.
package deploy
