package backendtest

import (
	"context"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/sessiontest"
)

func TestSessionSuite(t *testing.T) {
	each(t, func(t *testing.T, b *backend) {
		sessiontest.Run(t, func(t *testing.T) gateway.Store { return b.open(t) })
	})
}

// A steady-state batch commit costs exactly 3 requests on every backend:
// one GET of the writer record and two create-only log writes, counted at
// the HTTP transport for the cloud backends.
func TestCommitRequestBudget(t *testing.T) {
	each(t, func(t *testing.T, b *backend) {
		st, count := counted(t, b)
		n, err := sessiontest.CommitRequests(context.Background(), st, count)
		if err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Fatalf("a steady-state batch commit took %d requests, want 3", n)
		}
	})
}

// counted opens a store of b and returns how to count its requests.
func counted(t testing.TB, b *backend) (gateway.Store, func() int64) {
	st := b.open(t)
	if b.requests != nil {
		return st, b.requests
	}
	m, err := gateway.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	return m.Wrap(st, b.name), m.Total
}
