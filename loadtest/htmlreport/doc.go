// Package chart writes a scenario's HTML report: for each phase a table and
// go-echarts charts of the targets side by side (latency percentiles, and
// over time throughput, pool wait, queue length, goroutines, threads, RSS,
// heap). The report is one self-contained file: ECharts is inlined from an
// embedded copy, so it renders offline.
package chart
