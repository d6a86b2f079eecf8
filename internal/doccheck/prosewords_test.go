package doccheck

import (
	"strings"
	"unicode"
)

// hump says whether a word has an upper-case letter after a lower-case
// one, as a Go name of two words has (waitSpan, PoolWaits) and no word of
// English prose.
func hump(w string) bool {
	prev := ' '
	for _, r := range w {
		if unicode.IsLower(prev) && unicode.IsUpper(r) {
			return true
		}
		prev = r
	}
	return false
}

// proseWords are a line's words that may be Go names: letters, digits and
// underscores, starting with a letter, not after a dot, a slash or a
// hyphen (a member, a path: their forms check those).
func proseWords(line string) []string {
	var out []string
	start, prev := -1, ' ' // start: -1 between words, -2 in a word that is no name
	for i, r := range line + " " {
		switch {
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			if start == -1 {
				start = i
				if !unicode.IsLetter(r) || strings.ContainsRune("./-", prev) {
					start = -2
				}
			}
		case start >= 0:
			out = append(out, line[start:i])
			start = -1
		default:
			start = -1
		}
		prev = r
	}
	return out
}

// notGoNames are words written as Go names are that name no code of the
// repository: other software's names and brands.
var notGoNames = map[string]bool{
	"Semaphore": true, "ThreadLocal": true, // Java's
	"Location":        true,                                                  // an HTTP header
	"CloseNotifier":   true,                                                  // net/http's, which the code does not use
	"MaxLoad":         true,                                                  // nbhttp's
	"prepareRead":     true,                                                  // nbio's poller
	"AnnotationQuery": true, "DashboardLink": true, "GetHomeDashboard": true, // Grafana's source
	"inControlsMenu": true, "interpolateValue": true, // Grafana's source
	"GitHub": true, "JavaScript": true, "PromQL": true, "OpenMetrics": true, "macOS": true,
	"BuildKit": true, "IoT": true, "gRPC": true, "cAdvisor": true,
	"OOMKilled": true, // docker inspect's State.OOMKilled
}

// known says whether a word that is written as a Go name is one of the
// repository's: an identifier of its code, a word of a string of its code
// or of its YAML; its plural too (rawClients), and the names of notGoNames.
func (idx *goIndex) known(w string) bool {
	if idx.idents[w] || idx.words[w] || notGoNames[w] {
		return true
	}
	if s, ok := strings.CutSuffix(w, "s"); ok {
		return idx.idents[s] || idx.words[s] || notGoNames[s]
	}
	return false
}

// unknownName is why a word written as a Go name is stale, and what to do
// when it is another program's name.
const unknownName = "no Go code, string or YAML of the repository has it (another program's name? add it to notGoNames)"
