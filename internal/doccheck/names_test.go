package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// code is the text a page shows as code: inline `spans`, and with blocks
// the fenced blocks too.
func code(text string, blocks bool) []string {
	var out []string
	if blocks {
		out = append(out, fence.FindAllString(text, -1)...)
	}
	text = fence.ReplaceAllString(text, "")
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestProblemTypesHaveTheirAnchor: each problem type the API answers with
// is a heading of docs/reference/api.md.
func TestProblemTypesHaveTheirAnchor(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "services/internal/api/problems.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `ProblemBase = "`+repoURL+`docs/reference/api.md#problem-"`) {
		t.Fatal("ProblemBase is not " + repoURL + "docs/reference/api.md#problem-")
	}
	page, err := os.ReadFile(filepath.Join(root, "docs/reference/api.md"))
	if err != nil {
		t.Fatal(err)
	}
	a := anchors(string(page))
	types := regexp.MustCompile(`ProblemBase \+ "([a-z-]+)"`).FindAllStringSubmatch(string(data), -1)
	if len(types) < 5 {
		t.Fatalf("found %d problem types in problems.go: the parser is out of date", len(types))
	}
	for _, m := range types {
		if !a["problem-"+m[1]] {
			t.Errorf("problem type %s has no heading problem-%s in docs/reference/api.md", m[1], m[1])
		}
	}
}

// pathLike is a repository path as pages write them in code spans.
var pathLike = regexp.MustCompile(`^(?:services|loadtest|lab|internal|docs|deploy|grafana|prometheus|e2e|\.ci)/[A-Za-z0-9_./-]*$`)

// TestNamedFilesExist: every repository path a page shows in a code span
// exists, from the top or from the page's folder (results/ and bin/ are
// written by runs and are not checked; fenced blocks hold trees and
// commands, whose paths are relative to something else).
func TestNamedFilesExist(t *testing.T) {
	checked := 0
	for _, page := range markdownFiles(t) {
		data, _ := os.ReadFile(filepath.Join(root, page))
		for _, c := range code(string(data), false) {
			for _, word := range strings.Fields(c) {
				word = strings.TrimRight(word, ".,:;)")
				if !pathLike.MatchString(word) {
					continue
				}
				checked++
				// From the top, or from the page's folder (a folder's
				// README names its own subfolders).
				_, err := os.Stat(filepath.Join(root, word))
				if _, errHere := os.Stat(filepath.Join(root, filepath.Dir(page), word)); err != nil && errHere != nil {
					t.Errorf("%s names %s, which does not exist", page, word)
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d paths: the parser is out of date", checked)
	}
}

// TestNamedMakeTargetsExist: every `make <target>` a page shows is a target
// of the Makefile.
func TestNamedMakeTargetsExist(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`).FindAllStringSubmatch(string(mk), -1) {
		targets[m[1]] = true
	}
	use := regexp.MustCompile(`\bmake ([a-z][a-z0-9-]*)`)
	checked := 0
	for _, page := range markdownFiles(t) {
		data, _ := os.ReadFile(filepath.Join(root, page))
		for _, c := range code(string(data), true) {
			for _, m := range use.FindAllStringSubmatch(c, -1) {
				checked++
				if !targets[m[1]] {
					t.Errorf("%s names `make %s`, which the Makefile does not have", page, m[1])
				}
			}
		}
	}
	if checked < 30 {
		t.Fatalf("checked only %d make targets: the parser is out of date", checked)
	}
}
