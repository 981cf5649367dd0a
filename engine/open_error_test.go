package engine_test

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// A source or sink location that cannot be opened fails Open with the
// store's error; the cleanup of the half-open query must not panic on it.
func TestOpenFailsCleanlyWhenSourceOrSinkCannotOpen(t *testing.T) {
	down := errors.New("store unavailable")
	for _, which := range []string{"in", "out"} {
		t.Run(which, func(t *testing.T) {
			w := newWorld()
			writeEvents(t, w, "in", genEvents(1, 2, 5))
			o := w.Options(nil, 1)
			o.Registry = gateway.NewRegistry().Register("mem", func(_ context.Context, u *url.URL) (gateway.Store, error) {
				if u.Host == which {
					return nil, gateway.E("open", "", gateway.ErrUnavailable, down)
				}
				return w.Store(u.Host), nil
			})
			q, err := openQuery(context.Background(), mustSpec(t, tumblingSpec), o)
			if err == nil {
				q.Close(context.Background())
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, down) {
				t.Fatalf("err %v, want the store's error", err)
			}
		})
	}
}
