// Package htmlreport writes the HTML reports of loadtest's -html pages and
// of the lab's scenarios: for each phase a table and go-echarts charts of
// the targets side by side (latency percentiles, and over time throughput,
// pool wait, queue length, goroutines, threads, RSS, heap), and a run's
// verdict picture (VerdictDrawing), which the lab's front page draws too.
// A report is one self-contained file: ECharts is inlined from an embedded
// copy, so it renders offline.
package htmlreport
