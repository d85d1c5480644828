// Command dashgen writes kvserver's Grafana dashboard (deploy/dashboard)
// as the JSON Grafana imports and as the SVG picture the documentation
// shows. Run it from the repository root: make dashboard.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kvpool/kvpool/deploy/dashboard"
)

func main() {
	jsonPath := flag.String("json", "deploy/grafana/kvserver.json", "write the dashboard's JSON to this `file`")
	svgPath := flag.String("svg", "docs/observability-dashboard.svg", "write the picture of its panels to this `file`")
	flag.Parse()
	if err := write(*jsonPath, dashboard.JSON); err != nil {
		fatal(err)
	}
	if err := write(*svgPath, dashboard.SVG); err != nil {
		fatal(err)
	}
}

func write(path string, render func() ([]byte, error)) error {
	b, err := render()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w; run dashgen from the repository root", path, err)
	}
	fmt.Println("wrote", path)
	return nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "dashgen:", err)
	os.Exit(1)
}
