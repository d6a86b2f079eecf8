package diagnose

import (
	"encoding/json"
	"testing"
)

// evidenceJSON is ParseEvidence's result as -json prints it.
func evidenceJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(ParseEvidence(s))
	if err != nil {
		t.Fatalf("ParseEvidence(%q) does not marshal: %v", s, err)
	}
	return string(b)
}

func TestParseEvidence(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"pool_wait_p99=1.8 s; waiting_acquires=240 count; active_backends=0 count",
			`[{"signal":"pool_wait_p99","value":1.8,"unit":"s"},{"signal":"waiting_acquires","value":240,"unit":"count"},{"signal":"active_backends","value":0,"unit":"count"}]`},
		// Spaces around the separators, a trailing ';', a unit of two words,
		// none at all, Prometheus' own float format.
		{"  hold_minus_query = 0.25 s ; idle_in_tx=12 backends of 20 ;share=1e-01; ",
			`[{"signal":"hold_minus_query","value":0.25,"unit":"s"},{"signal":"idle_in_tx","value":12,"unit":"backends of 20"},{"signal":"share","value":0.1,"unit":""}]`},
		// humanize's SI suffixes read back as numbers.
		{"heap_per_request=1.5M bytes; wait=250m s; tiny=3µ s",
			`[{"signal":"heap_per_request","value":1500000,"unit":"bytes"},{"signal":"wait","value":0.25,"unit":"s"},{"signal":"tiny","value":0.000003,"unit":"s"}]`},
		// Not finite: the name and unit stay, the value goes (JSON has no NaN).
		{"ratio=NaN ratio; p99=+Inf s",
			`[{"signal":"ratio","unit":"ratio"},{"signal":"p99","unit":"s"}]`},
		// Malformed items: the whole text is the signal, with no value.
		{"the pool is full; =3 s; wait=slow; two words=1 s; threads=",
			`[{"signal":"the pool is full","unit":""},{"signal":"=3 s","unit":""},{"signal":"wait=slow","unit":""},{"signal":"two words=1 s","unit":""},{"signal":"threads=","unit":""}]`},
		{"", `[]`},
		{" ; ;", `[]`},
	} {
		if got := evidenceJSON(t, c.in); got != c.want {
			t.Errorf("ParseEvidence(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// Whatever a rule writes, the parser returns something JSON can carry.
func FuzzParseEvidence(f *testing.F) {
	f.Add("pool_wait_p99=1.8 s; waiting_acquires=240 count")
	f.Add("x=NaN; y=1e400 s; z=-0 k; ==; ;")
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range ParseEvidence(s) {
			if e.Signal == "" {
				t.Fatalf("ParseEvidence(%q): an item with no signal: %+v", s, e)
			}
		}
		evidenceJSON(t, s)
	})
}
