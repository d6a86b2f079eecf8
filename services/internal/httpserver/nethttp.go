package httpserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
)

// netHTTPServer is net/http's Server, with its connection states counted.
type netHTTPServer struct {
	srv *http.Server
	ln  net.Listener
	m   *metrics

	// active holds, per open connection, whether a request is in progress.
	// A sync.Map, not a map behind a mutex: every request changes its
	// connection's state twice, from as many goroutines as connections.
	active sync.Map // net.Conn -> bool
}

func newNetHTTP(cfg Config, ln net.Listener, h http.Handler, m *metrics) *netHTTPServer {
	s := &netHTTPServer{ln: lingerListener{ln}, m: m}
	lim := cfg.Limits
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    lim.MaxHeaderBytes,
		ConnState:         s.connState,
		ErrorLog:          slog.NewLogLogger(cfg.Log.Handler(), slog.LevelWarn),
	}
	if cc := cfg.ConnContext; cc != nil {
		s.srv.ConnContext = func(ctx context.Context, _ net.Conn) context.Context { return cc(ctx) }
	}
	return s
}

func (s *netHTTPServer) Serve() error {
	if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown is http.Server.Shutdown: it closes the listener and the idle
// connections, and waits for the active ones to finish their request.
func (s *netHTTPServer) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	_ = s.ln.Close() // when Serve never ran, Shutdown did not know the listener
	return err
}

func (s *netHTTPServer) Addr() net.Addr { return s.ln.Addr() }

// connState follows each connection through net/http's states: new and
// idle count as idle, active while a request is read or handled.
func (s *netHTTPServer) connState(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		s.active.Store(c, false)
		s.m.connection(1, 0)
	case http.StateActive:
		setMidRequest(c, true)
		if was, _ := s.active.Swap(c, true); was != true {
			s.m.connection(0, 1)
		}
	case http.StateIdle:
		setMidRequest(c, false)
		if was, _ := s.active.Swap(c, false); was == true {
			s.m.connection(0, -1)
		}
	case http.StateHijacked, http.StateClosed:
		was, open := s.active.LoadAndDelete(c)
		switch {
		case !open:
		case was == true:
			s.m.connection(-1, -1)
		default:
			s.m.connection(-1, 0)
		}
	}
}

// setMidRequest says whether c, when closed now, lingers (linger.go).
func setMidRequest(c net.Conn, mid bool) {
	if lc, ok := c.(*lingerConn); ok {
		lc.midRequest.Store(mid)
	}
}
