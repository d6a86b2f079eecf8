// Package doccheck holds no code: its tests check the repository's
// Markdown and the Go comments against the repository. Every relative link
// and anchor resolves, every file path a page names exists, every make
// target a page names is in the Makefile, every knob a page names is
// declared, every table next to a committed report quotes only figures of
// that report (docs/results.md, What is committed), and every Go name, Go
// file or package path a page's code or a Go comment gives is declared or
// exists (read with go/parser, no type checking).
package doccheck
