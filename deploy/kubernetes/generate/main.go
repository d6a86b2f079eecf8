// Command generate refreshes the copies of the compose lab's sources that
// the Kubernetes manifests hold (package kubernetes, docs/kubernetes.md):
// the board, the Prometheus rules (also as PrometheusRules) and Grafana's
// provisioning. It removes files the sources no longer have.
//
//	go run ./deploy/kubernetes/generate      # from the repository root: make k8s
package main

import (
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/orderlab/orderlab/deploy/kubernetes"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	repo := fs.String("repo", ".", "the repository's root")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files, err := kubernetes.Copies(*repo)
	if err != nil {
		return err
	}
	out := filepath.Join(*repo, "deploy", "kubernetes")
	for _, c := range kubernetes.CopyDirs {
		dir := filepath.Join(out, filepath.FromSlash(c.Dir))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		old, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range old {
			if _, keep := files[path.Join(c.Dir, e.Name())]; !keep {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					return err
				}
				fmt.Println("removed", filepath.Join(dir, e.Name()))
			}
		}
	}
	for name, data := range files {
		p := filepath.Join(out, filepath.FromSlash(name))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", p)
	}
	return nil
}
