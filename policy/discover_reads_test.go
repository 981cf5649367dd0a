package policy_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/policy"
)

// TestDiscoverReadsInParallel: the metadata of several checkpoints is read
// at the same time (on a remote store each read is a round trip; one at a
// time, 1,000 checkpoints cost seconds). Each metadata read waits until a
// second one is in flight; read one at a time, the first would wait for
// ever (the deadline ends the test).
func TestDiscoverReadsInParallel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	inFlight := 0
	both := make(chan struct{})
	st := gateway.Intercept(bucketStore(t), func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		if c.Op != gateway.OpGet || !strings.HasSuffix(c.Key, "/metadata") {
			return next(ctx)
		}
		mu.Lock()
		if inFlight++; inFlight == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
		case <-ctx.Done():
			return ctx.Err()
		}
		return next(ctx)
	})
	cps, err := policy.Discover(ctx, policy.Target{URL: "s3://bucket", Store: st})
	if err != nil {
		t.Fatalf("metadata read one at a time: %v", err)
	}
	want, err := policy.Discover(context.Background(), policy.Target{URL: "s3://bucket", Store: bucketStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != len(want) {
		t.Fatalf("%d checkpoints, want %d", len(cps), len(want))
	}
	for i := range cps {
		if cps[i].URL != want[i].URL || cps[i].QueryID != want[i].QueryID || cps[i].WriterQueryID != want[i].WriterQueryID {
			t.Errorf("checkpoint %d: %+v, want %+v", i, cps[i], want[i])
		}
	}
}

// TestDiscoverFirstErrorInOrder: when the store fails for several
// checkpoints, the error names the first of them by URL, as reading them
// in order would.
func TestDiscoverFirstErrorInOrder(t *testing.T) {
	for range 20 {
		f := gateway.NewFaults(
			gateway.Fault{Op: gateway.OpGet, Prefix: "tables/events/checkpoint/metadata", Action: gateway.FailBefore},
			gateway.Fault{Op: gateway.OpGet, Prefix: "streaming/q5/metadata", Action: gateway.FailBefore},
		)
		_, err := policy.Discover(context.Background(), policy.Target{URL: "s3://bucket", Store: f.Wrap(bucketStore(t))})
		if !errors.Is(err, gateway.ErrUnavailable) || !strings.Contains(err.Error(), "s3://bucket/streaming/q5:") {
			t.Fatalf("error %v, want the one of s3://bucket/streaming/q5", err)
		}
	}
}
