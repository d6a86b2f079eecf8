package htmlreport

import _ "embed"

// echartsJS is Apache ECharts 5.6.0 (assets/README.md).
//
//go:embed assets/echarts.min.js
var echartsJS string

// EChartsJS is the vendored ECharts, for other pages of loadtest that draw
// with it (the front page): one copy in the binary.
func EChartsJS() string { return echartsJS }
