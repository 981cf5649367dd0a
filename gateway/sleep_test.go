package gateway_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// TestSleep: a sleep ends after its duration with nil, and with the
// context's error when the context ends first or had already ended.
func TestSleep(t *testing.T) {
	if err := gateway.Sleep(t.Context(), time.Millisecond); err != nil {
		t.Fatalf("a plain sleep: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := gateway.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("a sleep on an ended context: %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- gateway.Sleep(ctx, time.Hour) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a sleep whose context ends: %v, want context.Canceled", err)
	}
}
