package chart

import _ "embed"

// echartsJS is Apache ECharts 5.6.0 (assets/README.md).
//
//go:embed assets/echarts.min.js
var echartsJS string
