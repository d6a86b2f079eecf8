package htmlreport

import (
	"html/template"
	"io"
	"strings"

	"github.com/go-echarts/go-echarts/v2/render"
)

// Page is a whole report.
type Page struct {
	Title    string
	Subtitle string   // e.g. host and time
	Notes    []string // paragraphs under the title
	Sections []Section
}

// Section is one phase: its table, more tables under their captions, and
// its charts.
type Section struct {
	Title  string
	Notes  []string
	Links  []Link // a list under the notes
	Head   []string
	Rows   [][]string
	More   []Table
	Charts []Chart
}

// Link is an item of a section's list: Text, a link to Href when set
// (relative to the page, say), then Note.
type Link struct {
	Text, Href, Note string
}

// Table is one table of a section, under its caption (none: no caption).
type Table struct {
	Caption string
	Head    []string
	Rows    [][]string
}

// Chart is a rendered go-echarts chart.
type Chart struct {
	Element template.HTML
	Script  template.HTML
}

// snippet renders a go-echarts chart into a Chart.
func snippet(r interface{ RenderSnippet() render.ChartSnippet }) Chart {
	s := r.RenderSnippet()
	return Chart{Element: template.HTML(s.Element), Script: template.HTML(s.Script)}
}

// Write renders p as one HTML document with ECharts inlined.
func Write(w io.Writer, p Page) error {
	n := 0
	for _, s := range p.Sections {
		n += len(s.Charts)
	}
	return pageTemplate.Execute(w, struct {
		Page
		ECharts template.JS
		Charts  int
	}{p, template.JS(echartsJS), n})
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"anchor": func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return '-'
		}, strings.ToLower(s))
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<script>{{.ECharts}}</script>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
.sub { color: #666; }
table { border-collapse: collapse; font-size: .85em; margin: .8em 0; max-width: 100%; }
caption { text-align: left; font-weight: 600; padding: .2em 0; }
th, td { border: 1px solid #ccc; padding: .25em .5em; } td { text-align: right; } td:first-child { text-align: left; }
td:last-child { text-align: left; overflow-wrap: anywhere; }
th { background: #f4f4f4; }
.charts { display: flex; flex-wrap: wrap; gap: 8px; }
.container { border: 1px solid #eee; }
</style>
</head>
<body data-charts="{{.Charts}}">
<h1>{{.Title}}</h1>
<p class="sub">{{.Subtitle}}</p>
{{range .Notes}}<p>{{.}}</p>
{{end}}
{{- range .Sections}}
<h2 id="{{anchor .Title}}">{{.Title}}</h2>
{{range .Notes}}<p>{{.}}</p>
{{end}}
{{- if .Links}}<ul>
{{range .Links}}<li>{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}{{with .Note}} {{.}}{{end}}</li>
{{end}}</ul>
{{end}}
{{- if .Rows}}<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}
{{- range .More}}{{if .Rows}}<table>
{{if .Caption}}<caption>{{.Caption}}</caption>
{{end}}<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{end}}
<div class="charts">
{{range .Charts}}{{.Element}}
{{.Script}}
{{end}}</div>
{{- end}}
</body>
</html>
`))
