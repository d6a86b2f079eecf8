package front

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orderlab/orderlab/lab/front/api"
)

// A chart of the page: fixed queries, chosen here, never sent by the
// browser. Each query is aggregated by job (one series per service, and by
// code for the answers); $W is the rate window, $JOBS the run's services.
// They read the metrics and the recording rule the board reads
// (grafana/board: Responses by status, Throughput, Tail latency, Pool
// acquire wait p99, Little's law).
type liveChart struct {
	ID, Title, Unit string
	Queries         []liveQuery
}

type liveQuery struct {
	Expr   string
	Legend string // a fixed name, or "code": the label's value
}

const apiRoutes = `route!~"/livez|/readyz"`

const (
	poolWaitP99 = `histogram_quantile(0.99, sum by (job) (rate(orderlab_db_pool_acquire_wait_seconds{job=~"$JOBS"}[$W])))`
	// The lowest deadline over the rate window: a run lowers it for its
	// phases and puts it back after, while the window still holds the run.
	deadline = `max by (job) (min_over_time(orderlab_knob_value{job=~"$JOBS", knob="REQUEST_TIMEOUT"}[$W]))`
)

var liveCharts = []liveChart{
	{ID: "answers", Title: "Answers per second, by status", Unit: "/s", Queries: []liveQuery{
		{`sum by (job, code) (rate(orderlab_http_request_duration_seconds_count{job=~"$JOBS", ` + apiRoutes + `}[$W]))`, "code"},
	}},
	// The page draws the run's bound over this line, phase by phase, from
	// Run.PhaseStarts: the bound of the knobs the run applied, the one its
	// verdicts are judged against. The recorded Little's-law bound is not
	// drawn: it divides the pool by the hold time seen, and an idle
	// service's short holds put it in the thousands.
	{ID: "orders", Title: "Committed orders/s vs the run's bound", Unit: "/s", Queries: []liveQuery{
		{`sum by (job) (rate(orderlab_orders_created_total{job=~"$JOBS"}[$W]))`, "committed"},
	}},
	{ID: "latency", Title: "Latency p50 and p99", Unit: "s", Queries: []liveQuery{
		{`histogram_quantile(0.5, sum by (job) (rate(orderlab_http_request_duration_seconds{job=~"$JOBS", ` + apiRoutes + `}[$W])))`, "p50"},
		{`histogram_quantile(0.99, sum by (job) (rate(orderlab_http_request_duration_seconds{job=~"$JOBS", ` + apiRoutes + `}[$W])))`, "p99"},
	}},
	// The p99 is interpolated inside a bucket, which can put it above the
	// REQUEST_TIMEOUT that ends every wait (2.48 s against 2 s): the chart
	// shows the deadline there instead.
	{ID: "pool_wait", Title: "Pool acquire wait p99 (at most the deadline)", Unit: "s", Queries: []liveQuery{
		{`(` + poolWaitP99 + ` <= on (job) ` + deadline + `) or on (job) (` + deadline + ` and on (job) ` + poolWaitP99 + `)`, "p99"},
	}},
}

// Series is the live data of a run: per service, per chart, its lines.
type Series struct {
	From     time.Time                    `json:"from"`
	To       time.Time                    `json:"to"`
	Step     float64                      `json:"step_seconds"`
	Charts   []ChartInfo                  `json:"charts"`
	Services map[string]map[string][]Line `json:"services"` // service -> chart id -> lines
	Errors   []string                     `json:"errors,omitempty"`
}

// ChartInfo names a chart.
type ChartInfo struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Unit  string `json:"unit"`
}

// Line is one series: [unix milliseconds, value] pairs.
type Line struct {
	Name   string       `json:"name"`
	Points [][2]float64 `json:"points"`
}

// lead is how much before the run's start the charts begin: the lab as it
// was.
const lead = 30 * time.Second

func (s *Server) series(w http.ResponseWriter, r *http.Request) {
	rs := s.lookup(r.PathValue("id"))
	if rs == nil {
		api.Fail(w, http.StatusNotFound, "no run %s among the current one and the last %d", r.PathValue("id"), s.cfg.Keep)
		return
	}
	if s.cfg.Prometheus == "" {
		api.Fail(w, http.StatusNotFound, "no Prometheus known to the page (lab front -prometheus URL)")
		return
	}
	v := rs.view()
	sc, _ := s.find(v.Scenario)
	to := time.Now()
	if v.EndedAt != nil {
		to = v.EndedAt.Add(10 * time.Second)
	}
	out, err := s.query(r.Context(), sc.Targets, v.StartedAt.Add(-lead), to)
	if err != nil {
		api.Fail(w, http.StatusBadGateway, "Prometheus: %v", err)
		return
	}
	api.WriteJSON(w, http.StatusOK, out)
}

// query reads every chart for jobs over from..to, with at most about 240
// points a line.
func (s *Server) query(ctx context.Context, jobs []string, from, to time.Time) (*Series, error) {
	step := max(time.Second, (to.Sub(from) / 240).Round(time.Second))
	window := max(10*time.Second, 2*step)
	out := &Series{From: from.UTC(), To: to.UTC(), Step: step.Seconds(), Services: map[string]map[string][]Line{}}
	quoted := make([]string, len(jobs))
	for i, j := range jobs {
		quoted[i] = regexpQuote(j)
		out.Services[j] = map[string][]Line{}
	}
	for _, c := range liveCharts {
		out.Charts = append(out.Charts, ChartInfo{ID: c.ID, Title: c.Title, Unit: c.Unit})
		for _, j := range jobs {
			out.Services[j][c.ID] = []Line{}
		}
		for _, q := range c.Queries {
			expr := strings.NewReplacer("$JOBS", strings.Join(quoted, "|"), "$W", promDuration(window)).Replace(q.Expr)
			res, err := s.queryRange(ctx, expr, from, to, step)
			if err != nil {
				// A Prometheus that cannot be reached answers no chart:
				// one error says so. A query it refuses costs its chart.
				if ctx.Err() != nil || errors.As(err, new(*url.Error)) {
					return nil, err
				}
				out.Errors = append(out.Errors, fmt.Sprintf("%s: %v", c.ID, err))
				continue
			}
			for _, m := range res {
				job := m.Metric["job"]
				if _, ok := out.Services[job]; !ok {
					continue
				}
				name := q.Legend
				if name == "code" {
					name = m.Metric["code"]
				}
				out.Services[job][c.ID] = append(out.Services[job][c.ID], Line{Name: name, Points: m.points()})
			}
		}
		for _, j := range jobs {
			slices.SortStableFunc(out.Services[j][c.ID], func(a, b Line) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	return out, nil
}

type matrix struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

func (m matrix) points() [][2]float64 {
	pts := make([][2]float64, 0, len(m.Values))
	for _, v := range m.Values {
		t, ok := v[0].(float64)
		str, ok2 := v[1].(string)
		if !ok || !ok2 {
			continue
		}
		f, err := strconv.ParseFloat(str, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		pts = append(pts, [2]float64{math.Round(t * 1000), f})
	}
	return pts
}

// queryRange is Prometheus's /api/v1/query_range.
func (s *Server) queryRange(ctx context.Context, expr string, from, to time.Time, step time.Duration) ([]matrix, error) {
	form := url.Values{
		"query": {expr},
		"start": {strconv.FormatInt(from.Unix(), 10)},
		"end":   {strconv.FormatInt(to.Unix(), 10)},
		"step":  {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(s.cfg.Prometheus, "/")+"/api/v1/query_range",
		strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.cfg.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	var answer struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []matrix `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("%s: %w", resp.Status, err)
	}
	if answer.Status != "success" {
		return nil, fmt.Errorf("%s: %s", resp.Status, answer.Error)
	}
	return answer.Data.Result, nil
}

// promDuration writes d as PromQL does: 10s, 2m.
func promDuration(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) + "s" }

// regexpQuote escapes a service name for a PromQL regexp matcher.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteRune('\\')
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
