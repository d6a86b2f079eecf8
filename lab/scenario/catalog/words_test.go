package catalog

import (
	"regexp"
	"strings"
	"testing"
)

// The words an expectation's quantity must be named by
// (docs/reference/scenario-format.md, How a verdict counts).
var (
	// successWords are about what got done: commits, orders, successes.
	successWords = regexp.MustCompile(`(?i)\b(commit\w*|orders?|goodput|succe\w*|throughput)\b`)
	// answerWords are about every answer, rejections included.
	answerWords = regexp.MustCompile(`(?i)\b(answer\w*|respon\w*)\b`)
	// busyWords are about the pool kept busy.
	busyWords = regexp.MustCompile(`(?i)\bpool\b.*\bbusy\b`)
	// starveWords are about requests starved in the pool.
	starveWords = regexp.MustCompile(`(?i)\bstarv\w*`)
	// amplificationWords are about the retries multiplying the attempts.
	amplificationWords = regexp.MustCompile(`(?i)\bamplif\w*`)
	// serverRejectionWords are about the rejections the server counted.
	serverRejectionWords = regexp.MustCompile(`(?i)\bserver\b.*\brejections?\b|\brejections?\b.*\bserver\b`)
)

// TestWordsNameTheQuantityTheyAreHeldTo: every expectation of the catalog
// is held to the quantity its words name. Words about commits, orders or
// goodput are never held to rps, which counts every answer, 429s
// included (the pipeline can answer 21,718/s and commit 3,499); an rps
// term is said in words about answers; goodput in words about commits or
// successes; pooluse in words about the pool kept busy; starved in words
// about starving; amplification in words naming the amplification;
// server_rejections in words about the server's rejections.
func TestWordsNameTheQuantityTheyAreHeldTo(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]int{}
	for _, s := range all {
		for _, e := range s.Expect {
			for _, term := range strings.Split(e.SLO, ",") {
				metric := strings.TrimSpace(term)
				if i := strings.IndexAny(metric, "<>"); i > 0 {
					metric = strings.TrimSpace(metric[:i])
				}
				where := s.Name + ", " + e.Target + " " + e.Phase + ": " + strings.TrimSpace(term)
				switch metric {
				case "rps":
					if successWords.MatchString(e.Says) {
						t.Errorf("%s: the words (%q) are about commits or successes; rps counts every answer, rejections included: hold them to goodput", where, e.Says)
					}
					if !answerWords.MatchString(e.Says) {
						t.Errorf("%s: rps counts every answer, rejections included; say so in the words (%q)", where, e.Says)
					}
				case "goodput":
					if !successWords.MatchString(e.Says) {
						t.Errorf("%s: goodput counts commits (successes); the words (%q) must say which", where, e.Says)
					}
				case "pooluse":
					if !busyWords.MatchString(e.Says) {
						t.Errorf("%s: pooluse is the pool kept busy by calls that succeeded; the words (%q) must say so", where, e.Says)
					}
				case "starved":
					if !starveWords.MatchString(e.Says) {
						t.Errorf("%s: starved counts acquires ended by their deadline; the words (%q) must say so", where, e.Says)
					}
				case "amplification":
					if !amplificationWords.MatchString(e.Says) {
						t.Errorf("%s: amplification is attempts over first attempts; the words (%q) must name the retry amplification", where, e.Says)
					}
				case "server_rejections":
					if !serverRejectionWords.MatchString(e.Says) {
						t.Errorf("%s: server_rejections counts the rejections the server answered; the words (%q) must say the server's rejections", where, e.Says)
					}
				default:
					continue
				}
				checked[metric]++
			}
		}
	}
	for _, m := range []string{"goodput", "pooluse", "starved", "amplification", "server_rejections"} {
		if checked[m] == 0 {
			t.Errorf("no catalog expectation holds %s: the test checks nothing of it", m)
		}
	}
}
