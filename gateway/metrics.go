package gateway

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts store requests by operation and outcome, in process
// (Requests) and as Prometheus metrics when a Registerer is given. A lost
// race (ErrExists, ErrPrecondition) and a miss (ErrNotFound) are outcomes,
// not failures.
type Metrics struct {
	mu       sync.Mutex
	counts   map[Op]int64
	failed   map[Op]int64
	requests *prometheus.CounterVec
	failures *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// NewMetrics creates the counters and, when reg is non-nil, registers
// ckgate_store_requests_total{backend,op,outcome},
// ckgate_store_failures_total{backend,op,kind} and
// ckgate_store_request_seconds{backend,op}.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		counts: map[Op]int64{},
		failed: map[Op]int64{},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ckgate_store_requests_total",
			Help: "Store requests by backend, operation and outcome (ok, not_found, exists, stale, error).",
		}, []string{"backend", "op", "outcome"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ckgate_store_failures_total",
			Help: "Failed store requests by backend, operation and error kind (gateway.KindName, or other); lost races and misses are not failures.",
		}, []string{"backend", "op", "kind"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ckgate_store_request_seconds",
			Help:    "Store request latency by backend and operation.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"backend", "op"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.requests, m.failures, m.latency} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// Wrap returns s instrumented under the backend label. A *Bucket counts
// itself: Wrap returns a view of it with the Observer installed
// (Bucket.WithObserver), still a *Bucket, so its optional calls stay
// native and each counts once. Any other Store is wrapped by Intercept.
func (m *Metrics) Wrap(s Store, backend string) Store {
	observe := func(op Op, d time.Duration, err error) { m.observe(backend, op, d, err) }
	if b, ok := s.(*Bucket); ok {
		return b.WithObserver(observe)
	}
	return Intercept(s, func(ctx context.Context, c Call, next func(context.Context) error) error {
		start := time.Now()
		err := next(ctx)
		observe(c.Op, time.Since(start), err)
		return err
	})
}

func (m *Metrics) observe(backend string, op Op, d time.Duration, err error) {
	m.mu.Lock()
	m.counts[op]++
	m.mu.Unlock()
	outcome := "ok"
	switch {
	case err == nil:
	case errors.Is(err, ErrNotFound):
		outcome = "not_found"
	case errors.Is(err, ErrExists):
		outcome = "exists"
	case errors.Is(err, ErrPrecondition):
		outcome = "stale"
	default:
		outcome = "error"
		kind := KindName(err)
		if kind == "" {
			kind = "other"
		}
		m.failures.WithLabelValues(backend, string(op), kind).Inc()
		m.mu.Lock()
		m.failed[op]++
		m.mu.Unlock()
	}
	m.requests.WithLabelValues(backend, string(op), outcome).Inc()
	m.latency.WithLabelValues(backend, string(op)).Observe(d.Seconds())
}

// Requests returns the number of requests seen per operation.
func (m *Metrics) Requests() map[Op]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.counts)
}

// Failures returns the number of failed requests per operation (lost races
// and misses excluded).
func (m *Metrics) Failures() map[Op]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.failed)
}

// Total returns the number of requests seen.
func (m *Metrics) Total() int64 {
	var n int64
	for _, v := range m.Requests() {
		n += v
	}
	return n
}

// Reset zeroes the in-process counts (Prometheus counters keep counting).
func (m *Metrics) Reset() {
	m.mu.Lock()
	clear(m.counts)
	clear(m.failed)
	m.mu.Unlock()
}

// FailureCounter returns the Prometheus counter of failed requests, by
// backend, op and kind (KindName's spelling, or "other").
func (m *Metrics) FailureCounter() *prometheus.CounterVec { return m.failures }

// RequestCounter returns the Prometheus counter of one backend, op and
// outcome (ok, not_found, exists, stale, error).
func (m *Metrics) RequestCounter(backend string, op Op, outcome string) prometheus.Counter {
	return m.requests.WithLabelValues(backend, string(op), outcome)
}
