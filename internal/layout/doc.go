// Package layout holds no code: its test checks that imports run one way
// through the repository, as the docs/development.md's "Layout" section draws them.
package layout
