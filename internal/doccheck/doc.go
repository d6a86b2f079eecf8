// Package doccheck holds no code: its tests check the repository's
// Markdown against the repository. Every relative link and anchor resolves,
// every file path a page names exists, every make target a page names is in
// the Makefile, every knob a page names is declared, and every table next
// to a committed report quotes only figures of that report
// (docs/results.md, What is committed).
package doccheck
