package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/orderlab/orderlab/services/internal/dberr"
)

// Each class of database error has one status and problem type (docs/reference/api.md,
// Errors); only what is left over is a 500. The real handlers meet these
// through the fault suites (apptest.FaultSuite); a conflict cannot get past
// validation to the database, nor can a refused transaction be provoked
// there, so the mapping is checked here as well.
func TestDatabaseErrorsAnswers(t *testing.T) {
	for _, tc := range []struct {
		class      dberr.Class
		key        string
		status     int
		typ        string
		retryAfter string
		detail     string
	}{
		{dberr.Unavailable, "", 503, "database-unavailable", "1", "had no effect"},
		{dberr.PoolExhausted, "", 503, "pool-exhausted", "", "no connection within 0s"},
		{dberr.ConnectionLost, "k", 503, "database-unavailable", "1", "had no effect"},
		{dberr.OutcomeUnknown, "k", 503, "outcome-unknown", "1", "same Idempotency-Key"},
		{dberr.OutcomeUnknown, "", 503, "outcome-unknown", "1", "may store it twice"},
		{dberr.Deadline, "k", 503, "timeout", "", "may or may not be stored"},
		{dberr.Conflict, "", 409, "conflict", "", "nothing was stored"},
		{dberr.Refused, "", 500, "", "", "internal error"},
		{dberr.Other, "", 500, "", "", "internal error"},
	} {
		r := gin.New()
		r.POST("/orders", func(c *gin.Context) {
			err := &dberr.Error{Class: tc.class, Err: errors.New("boom")}
			if tc.class == dberr.Deadline {
				err.Err = context.DeadlineExceeded
			}
			writeError(c, slog.New(slog.NewTextHandler(io.Discard, nil)), err)
		})
		req := httptest.NewRequest(http.MethodPost, "/orders", nil)
		if tc.key != "" {
			req.Header.Set("Idempotency-Key", tc.key)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		var p Problem
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
			t.Fatalf("%s: %v: %s", tc.class, err, w.Body)
		}
		wantType := "about:blank"
		if tc.typ != "" {
			wantType = ProblemBase + tc.typ
		}
		if w.Code != tc.status || p.Status != tc.status || p.Type != wantType || w.Header().Get("Retry-After") != tc.retryAfter ||
			!strings.Contains(p.Detail, tc.detail) {
			t.Errorf("%s (key %q): %d %s Retry-After %q; want %d %s Retry-After %q, detail with %q",
				tc.class, tc.key, w.Code, w.Body, w.Header().Get("Retry-After"), tc.status, wantType, tc.retryAfter, tc.detail)
		}
	}
}
