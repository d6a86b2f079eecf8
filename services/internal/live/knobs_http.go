package live

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/orderlab/orderlab/services/internal/api"
	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/order"
)

// The knob API on the admin listener (docs/reference/knobs.md): GET /knobs
// for everyone who reaches the listener, changes only with the bearer
// token ADMIN_TOKEN. Its problems' types are anchors of that page.
const knobProblemBase = "https://github.com/orderlab/orderlab/blob/main/docs/reference/knobs.md#problem-"

// maxPatchBytes bounds a PATCH body: every knob with a long value fits.
const maxPatchBytes = 64 << 10

// knobView is one knob in GET /knobs.
type knobView struct {
	Value   string `json:"value"`
	Default string `json:"default"`
	Range   string `json:"range,omitempty"`
	Unit    string `json:"unit,omitempty"`
	Live    bool   `json:"live"`
	Restart string `json:"restart,omitempty"` // why a change needs a restart
	Source  string `json:"source"`
	Meaning string `json:"meaning"`
}

// releaser hands back every connection LEAK_EVERY kept, and says how many.
type releaser interface{ ReleaseLeaked() int }

// Routes serves the knob API on mux.
func Routes(mux *http.ServeMux, live *Live, token string, leaks releaser, log *slog.Logger) {
	mux.HandleFunc("GET /knobs", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, viewKnobs(live.Current()))
	})
	guard := func(w http.ResponseWriter, r *http.Request) bool {
		if p := authorize(r, token); p != nil {
			api.ServeProblem(w, *p)
			return false
		}
		return true
	}
	mux.HandleFunc("PATCH /knobs", func(w http.ResponseWriter, r *http.Request) {
		if !guard(w, r) {
			return
		}
		changes, p := decodeChanges(r)
		if p != nil {
			api.ServeProblem(w, *p)
			return
		}
		changed, err := live.Change(changes, r.RemoteAddr)
		if err != nil {
			api.ServeProblem(w, changeProblem(err, log))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"changed": nonNil(changed), "knobs": viewKnobs(live.Current())})
	})
	mux.HandleFunc("POST /knobs/release-leaked", func(w http.ResponseWriter, r *http.Request) {
		if !guard(w, r) {
			return
		}
		n := leaks.ReleaseLeaked()
		log.Info("leaked connections released", "released", n, "remote_addr", r.RemoteAddr)
		writeJSON(w, http.StatusOK, map[string]int{"released": n})
	})
}

func viewKnobs(s *knob.Set) map[string]knobView {
	out := map[string]knobView{}
	for _, k := range s.Knobs() {
		v, src, _ := s.Get(k.Name)
		def := k.Default
		switch {
		case k.DefaultFrom != "":
			def = k.DefaultFrom
		case k.DefaultText != "":
			def = k.DefaultText
		case k.Kind == knob.DSN:
			def = k.Show(knob.Value{Text: k.Default})
		}
		out[k.Name] = knobView{Value: k.Show(v), Default: def, Range: k.Range(), Unit: k.Unit,
			Live: k.Live, Restart: k.Restart, Source: string(src), Meaning: k.Meaning}
	}
	return out
}

// authorize checks the bearer token in constant time. Without ADMIN_TOKEN
// the knob API is read-only.
func authorize(r *http.Request, token string) *api.Problem {
	if token == "" {
		return &api.Problem{Type: knobProblemBase + "read-only", Title: "Knobs are read-only", Status: http.StatusForbidden,
			Detail: "this service was started without ADMIN_TOKEN; set ADMIN_TOKEN and restart it to change knobs with Authorization: Bearer <ADMIN_TOKEN>"}
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
		return &api.Problem{Type: knobProblemBase + "unauthorized", Title: "Unauthorized", Status: http.StatusUnauthorized,
			Detail: "changing knobs needs Authorization: Bearer <ADMIN_TOKEN>"}
	}
	return nil
}

func decodeChanges(r *http.Request) (map[string]string, *api.Problem) {
	bad := func(detail string) *api.Problem {
		return &api.Problem{Type: knobProblemBase + "invalid-knobs", Title: "Invalid knob change", Status: http.StatusBadRequest, Detail: detail}
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxPatchBytes))
	if err != nil {
		return nil, bad(fmt.Sprintf("the body could not be read (at most %d bytes): %v", maxPatchBytes, err))
	}
	var changes map[string]string
	if err := json.Unmarshal(body, &changes); err != nil || changes == nil {
		return nil, bad(`want a JSON object of knob to value, values as strings in the environment's syntax: {"DB_MAX_CONNS":"5"}`)
	}
	if len(changes) == 0 {
		return nil, bad("no knob to change")
	}
	return changes, nil
}

// changeProblem answers a refused change: restart-only knobs are a 409
// (when nothing else is wrong), everything else a 400; each knob at
// fault is in errors, named, with its reason.
func changeProblem(err error, log *slog.Logger) api.Problem {
	var ce *knob.ChangeError
	var ae *ApplyError
	switch {
	case errors.Is(err, ErrShuttingDown):
		return api.Problem{Type: knobProblemBase + "shutting-down", Title: "Shutting down", Status: http.StatusServiceUnavailable,
			Detail: err.Error()}
	case errors.As(err, &ce):
		var fes []order.FieldError
		for _, n := range ce.Unknown {
			fes = append(fes, order.FieldError{Field: n, Detail: "unknown knob for this model (GET /knobs lists them)"})
		}
		for _, n := range ce.Restart {
			k, _ := knob.Lookup(n)
			fes = append(fes, order.FieldError{Field: n, Detail: "needs a restart: " + k.Restart})
		}
		for _, e := range ce.Invalid {
			fes = append(fes, order.FieldError{Field: e.Knob, Detail: e.Reason})
		}
		p := api.Problem{Type: knobProblemBase + "invalid-knobs", Title: "Invalid knob change", Status: http.StatusBadRequest,
			Detail: "nothing was changed: " + err.Error(), Errors: fes}
		if len(ce.Unknown)+len(ce.Invalid) == 0 {
			p.Type, p.Title, p.Status = knobProblemBase+"restart-only", "Knob needs a restart", http.StatusConflict
		}
		return p
	case errors.As(err, &ae):
		log.Error("knob change failed", "knobs", ae.Knobs, "err", ae.Err)
		return api.Problem{Type: knobProblemBase + "not-applied", Title: "Knob change not applied", Status: http.StatusInternalServerError,
			Detail: "nothing was changed: " + err.Error()}
	}
	log.Error("knob change failed", "err", err)
	return api.Problem{Title: "Internal server error", Status: http.StatusInternalServerError}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
