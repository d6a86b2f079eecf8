// Command generate writes the lab's dashboards (package board) as JSON into
// grafana/dashboards/, where Grafana's file provider picks them up.
//
//	go run ./grafana/generate            # from the repository root
//	go run ./grafana/generate -dir DIR
//
// It also writes lab/front/mystery/boardpanels_gen.go, the panels' ids by title,
// with which the front page links a panel of the board.
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
	panels := fs.String("panels", filepath.Join("lab", "front", "mystery", "boardpanels_gen.go"), "the front page's table of the board's panel ids (empty: not written)")
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
	if *panels == "" {
		return nil
	}
	table, err := board.PanelTable()
	if err != nil {
		return err
	}
	if err := os.WriteFile(*panels, table, 0o644); err != nil {
		return err
	}
	fmt.Println("wrote", *panels)
	return nil
}
