package direct

import (
	"context"

	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// Acquire takes a permit for one request's database access, or refuses it:
// the semaphore service's limiter (services/internal/limiter), taken before
// the body is read and given back once the request is answered. With a
// limit at or below DB_MAX_CONNS (or LIMIT=adaptive) no request waits long
// in the pool, and one turned away costs no decoding. A permit bounds
// database access only. The unbounded service, which has none, links no
// limiter.
type Acquire func(ctx context.Context) (Permit, error)

// Permit is what Acquire gave one request, held until its Release.
type Permit interface {
	Wait() model.Wait
	Release(done bool)
}

// Limited is the semaphore service's model: a request is admitted with a
// permit from acquire, for every kind of database call.
func Limited(store *postgres.Store, acquire Acquire, audit *audit.Recorder) *Model {
	m := Unlimited(store, audit)
	m.acquire = acquire
	return m
}

func (m *Model) admitWithPermit(ctx context.Context) (model.Admitted, error) {
	p, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &admitted{m: m, permit: p}, nil
}
