// Package api is the front page's JSON API as its servers write it
// (lab/front, and lab/front/mystery for mystery mode): what it shows of a
// scenario of the catalog (Entry) and of a run (Run), its error answer, and
// the strict reading of a request's body.
package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Problem is the API's error answer.
type Problem struct {
	Error string `json:"error"`
}

// Fail answers status with a Problem, its error written as fmt.Sprintf does.
func Fail(w http.ResponseWriter, status int, format string, args ...any) {
	WriteJSON(w, status, Problem{Error: fmt.Sprintf(format, args...)})
}

// WriteJSON answers status with v, indented, never cached.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// Decode reads a JSON body of at most 64 KiB into v, strictly.
func Decode(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}
