package front

import "embed"

// assets are the page: plain HTML, CSS and JavaScript; ECharts comes from
// loadtest/htmlreport's vendored copy (/echarts.min.js). Nothing is fetched from
// outside the lab.
//
//go:embed assets
var assets embed.FS
