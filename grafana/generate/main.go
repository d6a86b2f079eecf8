// Command generate writes the lab's dashboards (package board) as JSON into
// grafana/dashboards/, where Grafana's file provider picks them up.
//
//	go run ./grafana/generate            # from the repository root
//	go run ./grafana/generate -dir DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/orderlab/orderlab/grafana/board"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	dir := fs.String("dir", filepath.Join("grafana", "dashboards"), "output directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files, err := board.Files()
	if err != nil {
		return err
	}
	for name, data := range files {
		path := filepath.Join(*dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", path)
	}
	return nil
}
