package dbfault

import (
	"context"
	"time"

	"github.com/orderlab/orderlab/internal/ledger"
)

// Summary is a fault run's answers, held to the orders table: one row of
// the reliability tables, and the figures a test or a scenario checks.
type Summary struct {
	Sent    int          `json:"sent"`
	Answers ledger.Tally `json:"answers"`
	// Failed counts the answers that were not a success. Recovery is the
	// time from the lifting of the fault to the sending of the last order
	// that failed: 0 when every order sent after it succeeded (and
	// meaningless when nothing failed).
	Failed   int           `json:"failed"`
	Recovery time.Duration `json:"-"`
	// Recovered: an order sent after the fault took effect succeeded. For
	// Postgres stopped (nothing can succeed while it is down) that is the
	// service answering with success again once it is back, even when it
	// is back before pg_ctl start returns (the lifting).
	Recovered bool `json:"recovered"`
	// What the table says against the answers (ledger.Check): each must
	// be 0.
	Missing    int `json:"missing"`
	Duplicates int `json:"duplicates"`
	Stored     int `json:"stored_despite_answer"`
}

// Summarize holds the answers of a run through the fault of tl to the
// orders table that db reaches; it returns the table's findings too,
// answer by answer.
func Summarize(ctx context.Context, db ledger.Querier, as []ledger.Answer, tl Timeline) (Summary, ledger.Audit, error) {
	lifted := tl.Lifted
	s := Summary{Sent: len(as), Answers: ledger.Count(as)}
	for _, a := range as {
		if !tl.On.IsZero() && a.Sent.After(tl.On) && a.Success() {
			s.Recovered = true
		}
		if a.Success() {
			continue
		}
		s.Failed++
		if d := a.Sent.Sub(lifted); !lifted.IsZero() && d > s.Recovery {
			s.Recovery = d
		}
	}
	au, err := ledger.Check(ctx, db, as)
	if err != nil {
		return s, au, err
	}
	s.Missing, s.Duplicates, s.Stored = len(au.Missing), len(au.Duplicates), len(au.Stored)
	return s, au, nil
}

// OK says whether the table backs every answer and none was a 500 or a
// transport error: what no fault may cause.
func (s Summary) OK() bool {
	return s.Missing+s.Duplicates+s.Stored == 0 && s.Answers["500"] == 0 && s.Answers[ledger.TransportError] == 0
}

// RecoveryText is the recovery as the reliability tables write it.
func (s Summary) RecoveryText() string {
	switch {
	case s.Failed == 0:
		return "no failed answer"
	case s.Recovery == 0:
		return "at once"
	}
	return s.Recovery.Round(10 * time.Millisecond).String()
}
