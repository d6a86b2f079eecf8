package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/orderlab/orderlab/internal/cli"
)

// shutdownWait is how long a daemon's open requests have to finish once it
// is told to stop.
const shutdownWait = 5 * time.Second

// daemon is one of the lab's HTTP servers (the front page, the database
// proxy's control API, the background load's counts and rate), serving on
// its own goroutine from the moment it is listening.
type daemon struct {
	srv  *http.Server
	addr net.Addr
	done chan struct{} // closed when Serve has returned
	err  error         // why Serve returned, unless it was told to stop
}

// listenAndServe binds addr and serves h on it until shutdown.
func listenAndServe(addr string, h http.Handler) (*daemon, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	d := &daemon{srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}, addr: ln.Addr(), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		if err := d.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			d.err = err
		}
	}()
	return d, nil
}

// serveUntil serves until ctx is done, then shuts down, and returns the
// command's exit code: ExitFail when the server failed, ExitOK after a
// stop, even when the shutdown had to cut open requests (said on stderr,
// after name): a stop is what was asked.
func (d *daemon) serveUntil(ctx context.Context, name string, stderr io.Writer) int {
	select {
	case <-d.done:
		fmt.Fprintf(stderr, "%s: %v\n", name, d.err)
		return cli.ExitFail
	case <-ctx.Done():
	}
	if err := d.shutdown(ctx); err != nil {
		fmt.Fprintf(stderr, "%s: shutdown: %v\n", name, err)
	}
	return cli.ExitOK
}

// shutdown stops accepting, gives open requests shutdownWait to finish, and
// returns once Serve has: the server's failure, if it had failed, or the
// shutdown's.
func (d *daemon) shutdown(ctx context.Context) error {
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownWait)
	defer cancel()
	err := d.srv.Shutdown(stop)
	<-d.done
	return errors.Join(d.err, err)
}
