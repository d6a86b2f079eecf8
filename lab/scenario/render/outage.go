package render

import (
	"cmp"
	"fmt"

	"github.com/orderlab/orderlab/lab/scenario/result"
)

// outageTables are the tables of a phase's outages: one row per target,
// then the answers second by second.
func outageTables(os []result.OutageResult) []Table {
	if len(os) == 0 {
		return nil
	}
	sum := Table{Head: []string{"service", "outage", "asked, in effect, lifted", "keyed orders", "answers", "full success again after the outage", "acknowledged but missing", "stored twice", "answered not stored but stored"}}
	bySec := Table{Head: []string{"second"}}
	rows := 0
	for _, o := range os {
		down := "-"
		if o.Started > 0 {
			down = fmt.Sprintf("%.2f s, %.2f s, %.2f s", o.Stopping, o.Stopped, o.Started)
		}
		rec := o.RecoveryText()
		if o.Err != "" {
			rec = "error: " + o.Err
		}
		sum.Rows = append(sum.Rows, []string{o.Target, cmp.Or(o.How, "Postgres stopped"), down, fmt.Sprint(o.Sent), o.Answers.String(), rec,
			fmt.Sprint(o.Missing), fmt.Sprint(o.Duplicates), fmt.Sprint(o.Stored)})
		bySec.Head = append(bySec.Head, o.Target)
		rows = max(rows, len(o.BySecond))
	}
	for sec := range rows {
		row := []string{fmt.Sprint(sec)}
		for _, o := range os {
			cell := "-"
			if sec < len(o.BySecond) {
				cell = o.BySecond[sec].String()
			}
			row = append(row, cell)
		}
		bySec.Rows = append(bySec.Rows, row)
	}
	return []Table{sum, bySec}
}
