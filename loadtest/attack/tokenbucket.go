package attack

import "sync/atomic"

// gRPC's retry throttling, as its retry design (proposal A6, "Throttling
// Configuration") states it, with the values its example gives: the
// client keeps a count of tokens, from 0 to TokenBucketMax, full at the
// start; every failed attempt takes one, every successful one gives back
// TokenBucketRatio; a failed attempt is retried only while the count is
// above half of TokenBucketMax.
const (
	TokenBucketMax   = 10
	TokenBucketRatio = 0.1
)

// milli is the bucket's unit: A6 allows a tokenRatio of up to three
// decimal places, so thousandths of a token count it exactly.
const milli = 1000

// tokenBucket is a run's retry throttle: one count shared by every worker,
// as a gRPC channel shares one per server. It has no clock: tokens come
// back with successes, not with time, so a client whose attempts mostly
// fail retries almost nothing however long it keeps sending, and its
// retries rise again with the share of attempts that succeed. Safe for
// concurrent use.
type tokenBucket struct {
	tokens       atomic.Int64 // thousandths of a token
	max, ratio   int64        // thousandths
	retryAboveMs int64        // thousandths: retries only while tokens > this
}

func newTokenBucket(maxTokens, ratio float64) *tokenBucket {
	b := &tokenBucket{max: int64(maxTokens * milli), ratio: int64(ratio*milli + 0.5)}
	b.retryAboveMs = b.max / 2
	b.tokens.Store(b.max)
	return b
}

// failed takes a token for a failed attempt (a 429 or 503) and says
// whether the failure may be retried: whether the count left is above
// half the bucket.
func (b *tokenBucket) failed() (retry bool) {
	for {
		old := b.tokens.Load()
		n := max(0, old-milli)
		if b.tokens.CompareAndSwap(old, n) {
			return n > b.retryAboveMs
		}
	}
}

// succeeded gives back a successful attempt's share of a token.
func (b *tokenBucket) succeeded() {
	for {
		old := b.tokens.Load()
		if old >= b.max || b.tokens.CompareAndSwap(old, min(b.max, old+b.ratio)) {
			return
		}
	}
}

// count is the tokens left, in tokens.
func (b *tokenBucket) count() float64 { return float64(b.tokens.Load()) / milli }
