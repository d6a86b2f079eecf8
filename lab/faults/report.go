package faults

import (
	"fmt"
	"io"
	"strings"

	"github.com/orderlab/orderlab/internal/dbfault"
)

// WriteMarkdown writes one table per fault, a row per service: the README's
// reliability tables.
func WriteMarkdown(w io.Writer, rs []Result, faults []dbfault.Fault, cfg Config) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d keyed orders/s (a unique Idempotency-Key each); the fault after %s of load, %s more after it ends.\n",
		cfg.Rate, cfg.Before, cfg.After)
	for _, f := range faults {
		fmt.Fprintf(&b, "\n#### %s\n\n%s.\n\n", f.Name, f.What)
		b.WriteString("| service | orders | answers | full success again after the fault ended | acknowledged but missing | stored twice | answered not stored but stored |\n")
		b.WriteString("|---|---:|---|---:|---:|---:|---:|\n")
		for _, r := range rs {
			if r.Fault != f.Name {
				continue
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %d | %d | %d |\n",
				r.Service, r.Sent, r.Answers, r.RecoveryText(), r.Missing, r.Duplicates, r.Stored)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
