package sessiontest_test

import (
	"context"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/gateway/sessiontest"
)

func TestMemstore(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) gateway.Store { return memstore.New() })
}

func TestCommitRequestsMemstore(t *testing.T) {
	m, _ := gateway.NewMetrics(nil)
	n, err := sessiontest.CommitRequests(context.Background(), m.Wrap(memstore.New(), "mem"), m.Total)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("a steady-state batch commit took %d requests, want 3", n)
	}
}
