package httpserver

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/nbhttp"
	"github.com/lesismal/nbio/taskpool"

	"github.com/orderlab/orderlab/internal/proc"
)

// nbioServer is nbio's nbhttp engine serving the handler, with what
// net/http does and nbhttp does not added around it: per-request read
// deadlines and header and body bounds (nbioconn.go), a drain that lets the
// requests in flight finish (nbhttp's Shutdown closes every connection at
// once), answers to HEAD without a body, and the counts of connections and
// of the handler pool.
type nbioServer struct {
	engine   *nbhttp.Engine
	ln       *holdListener
	pool     *taskpool.TaskPool
	lim      Limits
	tooLarge []byte // the 413 answer the guard writes
	connCtx  func(context.Context) context.Context
	m        *metrics
	draining atomic.Bool

	mu       sync.Mutex
	conns    map[net.Conn]*nbioConn
	started  bool // the engine runs
	stopping bool // Shutdown was called
	done     chan struct{}
}

// maxDefaultHandlerPool bounds the default pool where the open-files limit
// is huge (a million in many containers): 65,536 parked handlers already
// hold about 0.5 GiB of stacks.
const maxDefaultHandlerPool = 1 << 16

// defaultHandlerPool is one handler goroutine for every connection the
// process may have open, so that a request read in full never waits for a
// goroutine: each request in flight holds a connection, and so a
// descriptor. nbio's own default, 1024 per GOMAXPROCS, served 5,000
// requests in flight in rounds and lost to net/http at the tail
// (docs/admission.md). The pool starts its goroutines on demand, so a
// large bound costs nothing while idle.
func defaultHandlerPool() int {
	n := 1024 * runtime.GOMAXPROCS(0)
	if files, err := proc.OpenFiles(); err == nil {
		n = max(n, min(files, maxDefaultHandlerPool))
	}
	return n
}

func newNBIO(cfg Config, ln net.Listener, h http.Handler, m *metrics) *nbioServer {
	size := cfg.HandlerPool
	if size <= 0 {
		size = defaultHandlerPool()
	}
	m.poolSize = size
	setNBIOLogger(cfg.Log)
	lim := cfg.Limits
	s := &nbioServer{
		ln:       newHoldListener(ln),
		lim:      lim,
		tooLarge: answerBodyTooLarge(cfg.BodyTooLarge),
		connCtx:  cfg.ConnContext,
		m:        m,
		// taskpool.New(n) runs at most n-1 tasks at once; it queues the
		// rest (up to 64 Ki, then the poller waits).
		pool:  taskpool.New(size+1, 64<<10),
		conns: make(map[net.Conn]*nbioConn),
		done:  make(chan struct{}),
	}
	s.engine = nbhttp.NewEngine(nbhttp.Config{
		Name:              "orderlab",
		Network:           "tcp",
		Addrs:             []string{ln.Addr().String()},
		Listen:            func(string, string) (net.Listener, error) { return s.ln, nil },
		Handler:           s.wrap(h),
		ServerExecutor:    s.pool.Go,
		SupportServerOnly: true,
		// Never canceled: nbhttp gives every request this context and
		// cancels it at Shutdown, which would abort the requests a drain
		// lets finish.
		Context:         context.Background(),
		KeepaliveTime:   lim.IdleTimeout,
		WriteTimeout:    lim.WriteTimeout,
		MaxHTTPBodySize: lim.MaxBufferedBody,
		// Answers waiting beyond the socket's buffer; more closes the
		// connection (nbio's default: no bound).
		MaxWriteBufferSize: lim.MaxUnsentBytes,
		ReadLimit:          readLimit(lim),
	})
	s.engine.OnOpen(s.opened)
	s.engine.OnClose(s.closed)
	// Every connection's bytes pass here first (nbhttp's own handler is
	// the connection's DataHandler): see onData.
	s.engine.Engine.OnData(s.onData)
	return s
}

// readLimit is what one connection may have buffered of an incomplete
// request: its headers and its body. Zero (nbio's default, 64 MiB) when
// either is unbounded.
func readLimit(lim Limits) int {
	if lim.MaxHeaderBytes <= 0 || lim.MaxBufferedBody <= 0 {
		return 0
	}
	return lim.MaxHeaderBytes + headerSlack + lim.MaxBufferedBody
}

func (s *nbioServer) Serve() error {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return nil
	}
	err := s.engine.Start()
	s.started = err == nil
	s.mu.Unlock()
	if err != nil {
		s.pool.Stop()
		return err
	}
	<-s.done
	return nil
}

func (s *nbioServer) Addr() net.Addr { return s.ln.Addr() }

// Shutdown drains the way http.Server.Shutdown does: the listener closes,
// idle connections are closed (one that never sent a request gets 5 s),
// answers finished from now on carry Connection: close and close their
// connection, and Shutdown polls until no connection is left. Then the
// engine, its pollers and the handler pool stop.
func (s *nbioServer) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	again, started := s.stopping, s.started
	s.stopping = true
	s.mu.Unlock()
	if again {
		select {
		case <-s.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.draining.Store(true)
	s.ln.stopAccepting()
	if !started {
		_ = s.ln.Close()
		s.pool.Stop()
		close(s.done)
		return nil
	}
	poll := time.Millisecond
	t := time.NewTimer(poll)
	defer t.Stop()
	for s.closeIdle() > 0 {
		select {
		case <-ctx.Done():
			// Handlers still run; their connections close when the engine stops.
			go s.stop()
			return ctx.Err()
		case <-t.C:
		}
		poll = min(2*poll, 500*time.Millisecond)
		t.Reset(poll)
	}
	s.stop()
	return nil
}

// stop stops the engine (its listener goroutine, pollers and timers) and
// the handler pool, and lets Serve return.
func (s *nbioServer) stop() {
	s.engine.Stop()
	s.pool.Stop()
	close(s.done)
}

// closeIdle closes the connections without a request in progress and
// returns how many connections are still open.
func (s *nbioServer) closeIdle() int {
	now := time.Now()
	var idle []net.Conn
	s.mu.Lock()
	n := len(s.conns)
	for c, st := range s.conns {
		if st.busy.Load() == 0 && (st.served.Load() || now.Sub(st.opened) > 5*time.Second) {
			idle = append(idle, c)
		}
	}
	s.mu.Unlock()
	for _, c := range idle {
		_ = c.Close()
	}
	return n
}

// wrap is the handler nbhttp calls on a pool goroutine. A request's
// deadline (Limits.RequestTimeout) runs from when it was read in full, so
// that its wait for this goroutine counts: a request that waited too long
// is answered at once (503 from the API) instead of running late.
func (s *nbioServer) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := &answer{ResponseWriter: w, r: r, draining: &s.draining, head: r.Method == http.MethodHead}
		req := r
		if st := connOf(w); st != nil && (st.ctx != nil || s.lim.RequestTimeout > 0) {
			ctx := r.Context()
			if st.ctx != nil {
				ctx = st.ctx
			}
			if s.lim.RequestTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, st.queued.Add(s.lim.RequestTimeout))
				defer cancel()
			}
			req = r.WithContext(ctx)
		}
		h.ServeHTTP(a, req)
		a.finish()
	})
}

func (s *nbioServer) opened(c net.Conn) {
	st := &nbioConn{conn: c, opened: time.Now()}
	if s.connCtx != nil {
		st.ctx = s.connCtx(context.Background()) // nbhttp's own request context is Background too
	}
	s.mu.Lock()
	s.conns[c] = st
	s.mu.Unlock()
	s.m.connection(1, 0)
}

// closed runs on the connection's job queue, after its handlers.
func (s *nbioServer) closed(c net.Conn, _ error) {
	s.mu.Lock()
	st := s.conns[c]
	delete(s.conns, c)
	s.mu.Unlock()
	if st == nil {
		return
	}
	if st.busy.Swap(0) > 0 { // closed while a request was being read
		s.m.connection(-1, -1)
	} else {
		s.m.connection(-1, 0)
	}
}

// onData sees each read of a connection before nbhttp parses it: the first
// bytes of a request start its clock, and a request still incomplete after
// the read gets its deadline.
func (s *nbioServer) onData(c *nbio.Conn, data []byte) {
	st := s.track(c)
	if st != nil && st.rejected {
		st.discard(len(data))
		return
	}
	if st != nil && !st.reading {
		s.beginRequest(st)
	}
	if st != nil && !st.headersDone {
		st.headerRead += len(data)
	}
	c.DataHandler()(c, data)
	if st == nil || !st.reading || st.rejected {
		return
	}
	// Headers still incomplete after all these bytes: one header line too
	// long for the guard's count, which sees only whole lines (nbhttp
	// would buffer it up to its ReadLimit, then close without an answer).
	if lim := s.lim.MaxHeaderBytes; lim > 0 && !st.headersDone && st.headerRead > lim+headerSlack {
		st.reject(answerHeaderTooLarge)
		return
	}
	st.armDeadline(s.lim)
}

// track returns c's state; on c's first read it puts a guard in front of
// nbhttp's parser callbacks and counts the requests it dispatches.
func (s *nbioServer) track(c *nbio.Conn) *nbioConn {
	p, ok := c.Session().(*nbhttp.Parser)
	if !ok {
		return nil
	}
	if g, ok := p.Processor.(*guard); ok {
		return g.st
	}
	s.mu.Lock()
	st := s.conns[c]
	s.mu.Unlock()
	if st == nil {
		return nil
	}
	p.Processor = &guard{Processor: p.Processor, s: s, st: st}
	p.Execute = s.dispatch(st, p.Execute)
	return st
}

// dispatch wraps a connection's executor, which queues a request read in
// full for the handler pool, to count the queue and the busy goroutines,
// time the wait, and mark the request finished once its answer is written.
func (s *nbioServer) dispatch(st *nbioConn, execute func(func()) bool) func(func()) bool {
	return func(job func()) bool {
		if st.busy.Load() > MaxPipelined { // this request counts already
			_ = st.conn.Close()
			s.endRequest(st)
			return false
		}
		queued := time.Now()
		s.m.poolQueued.Add(1)
		ok := execute(func() {
			s.m.poolQueued.Add(-1)
			s.m.poolBusy.Add(1)
			s.m.poolWait.Observe(time.Since(queued).Seconds())
			st.queued = queued // for the handler, on this goroutine (a connection's jobs run one at a time)
			// nbhttp arms the idle deadline (KeepaliveTime) after it has
			// flushed the previous answer; the client may have sent this
			// request, and OnComplete cleared the deadline, in between. The
			// previous job is done now: clear it again, so that the idle
			// timer of the answer before never closes the connection under
			// this handler.
			_ = st.conn.SetReadDeadline(time.Time{})
			defer func() {
				s.m.poolBusy.Add(-1)
				s.endRequest(st)
			}()
			job() // the handler, then nbhttp writes the answer
		})
		if !ok { // the connection closed meanwhile
			s.m.poolQueued.Add(-1)
			s.endRequest(st)
		}
		return ok
	}
}

// beginRequest: the first bytes of a request arrived (poller goroutine).
func (s *nbioServer) beginRequest(st *nbioConn) {
	st.reading, st.start, st.headerBytes, st.headerRead, st.headersDone = true, time.Now(), 0, 0, false
	if st.busy.Add(1) == 1 {
		s.m.connection(0, 1)
	}
}

// endRequest: a request's answer was written, or it will never be.
func (s *nbioServer) endRequest(st *nbioConn) {
	if st.busy.Add(-1) == 0 {
		s.m.connection(0, -1)
	}
}
