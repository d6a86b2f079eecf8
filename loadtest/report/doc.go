// Package report turns load runs into what people and programs read: the
// JSON document (schema [Schema], documented in loadtest/README.md), the
// human table, the Markdown table, the live progress line and the SLO check.
package report
