package httpserver

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// holdListener is the nbio server's listener. nbio's accept loop calls
// Accept again after every error until its engine stops, so a listener
// closed at the start of a drain would spin, and a full file table (EMFILE
// at the open-files limit) would spin too. holdListener stops accepting
// when the drain starts (the socket closes: new connections are refused)
// and then holds Accept until the engine stops; before that, it backs off
// after an error as net/http does (5 ms doubling to 1 s).
type holdListener struct {
	net.Listener
	stopping  atomic.Bool
	closed    chan struct{}
	closeOnce sync.Once
	backoff   time.Duration // Accept's goroutine only
}

func newHoldListener(ln net.Listener) *holdListener {
	return &holdListener{Listener: ln, closed: make(chan struct{})}
}

// Accept returns the next connection. After stopAccepting it returns an
// error only once Close was called.
func (l *holdListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.backoff = 0
		return c, nil
	}
	if l.stopping.Load() {
		<-l.closed
		return nil, err
	}
	l.backoff = min(max(2*l.backoff, 5*time.Millisecond), time.Second)
	select {
	case <-time.After(l.backoff):
	case <-l.closed:
	}
	return nil, err
}

// stopAccepting closes the socket, so that new connections are refused.
func (l *holdListener) stopAccepting() {
	l.stopping.Store(true)
	_ = l.Listener.Close()
}

// Close closes the socket and lets a held Accept return.
func (l *holdListener) Close() error {
	l.stopping.Store(true)
	l.closeOnce.Do(func() { close(l.closed) })
	if err := l.Listener.Close(); !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil // closed already, by stopAccepting
}
