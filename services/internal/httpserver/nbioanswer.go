package httpserver

import (
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/lesismal/nbio/nbhttp"
)

// connOf returns the state of the connection nbhttp's writer w answers on.
func connOf(w http.ResponseWriter) *nbioConn {
	if res, ok := w.(*nbhttp.Response); ok && res.Parser != nil {
		if g, ok := res.Parser.Processor.(*guard); ok {
			return g.st
		}
	}
	return nil
}

// answer is nbhttp's ResponseWriter for one request, with two things
// net/http does and nbhttp does not. During a drain the answer says
// Connection: close, and nbhttp closes the connection after writing it
// (r.Close is what nbhttp looks at, when it writes the header: at the
// first Write, or after the handler). An answer to HEAD drops its body and
// gives its length instead (nbhttp would send the body, or an empty chunked
// one, into the connection and corrupt it).
type answer struct {
	http.ResponseWriter
	r        *http.Request // as nbhttp holds it
	draining *atomic.Bool
	head     bool
	dropped  int // HEAD: body bytes not sent
}

func (a *answer) closeIfDraining() {
	if !a.r.Close && a.draining.Load() {
		a.r.Close = true
	}
}

func (a *answer) WriteHeader(code int) {
	a.closeIfDraining()
	a.ResponseWriter.WriteHeader(code)
}

func (a *answer) Write(p []byte) (int, error) {
	a.closeIfDraining()
	if a.head {
		a.dropped += len(p)
		return len(p), nil
	}
	return a.ResponseWriter.Write(p)
}

// Flush sends what is buffered (http.Flusher).
func (a *answer) Flush() {
	a.closeIfDraining()
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach nbhttp's writer.
func (a *answer) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// finish runs after the handler, before nbhttp writes what is left.
func (a *answer) finish() {
	a.closeIfDraining()
	if a.head && a.Header().Get("Content-Length") == "" {
		a.Header().Set("Content-Length", strconv.Itoa(a.dropped))
	}
}
