package apptest

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/app"
)

// ShutdownKeepsAcknowledged fires orders from many clients, stops the
// service while they are in flight, and checks that every order answered
// 201 is in the table: an acknowledged order is a committed order. It runs
// once per HTTP server: each drains its connections its own way.
func ShutdownKeepsAcknowledged(t *testing.T, svc app.Service, env map[string]string) {
	EachServer(t, env, func(t *testing.T, env map[string]string) { shutdownKeepsAcknowledged(t, svc, env) })
}

func shutdownKeepsAcknowledged(t *testing.T, svc app.Service, env map[string]string) {
	inst := Start(t, svc, env)

	const clients = 24
	var (
		mu      sync.Mutex
		ids     []int64
		started atomic.Int64
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	for c := range clients {
		wg.Go(func() {
			for n := 0; n < 200; n++ { // bounded: at most 200 orders a client
				select {
				case <-stop:
					return
				default:
				}
				started.Add(1)
				r, err := inst.PostOrder("/orders?db_delay=20ms", OrderBody("shutdown", 1+(c+n)%4), "")
				if err != nil {
					return // the listener closed: the service is stopping
				}
				if r.Status == http.StatusCreated {
					var o storedOrder
					r.JSON(t, &o)
					mu.Lock()
					ids = append(ids, o.ID)
					mu.Unlock()
				}
			}
		})
	}
	// Let the load build up, then stop the service under it.
	poll.Until(t, 30*time.Second, "three orders a client under way", func() error {
		if n := started.Load(); n < 3*clients {
			return fmt.Errorf("%d orders started by %d clients", n, clients)
		}
		return nil
	})
	if err := inst.Stop(); err != nil {
		t.Fatalf("service did not stop cleanly under load: %v\nlog:\n%s", err, inst.Log)
	}
	close(stop)
	wg.Wait()

	if len(ids) == 0 {
		t.Fatal("no order was acknowledged before the shutdown; the test proves nothing")
	}
	n := inst.CountRows("SELECT count(*) FROM orders WHERE id = ANY($1)", ids)
	if n != len(ids) {
		t.Errorf("%d orders were acknowledged with 201 but only %d are in the table", len(ids), n)
	}
	t.Logf("%d orders acknowledged before and during shutdown, all committed", len(ids))
}
