package gcsstore

import (
	"context"
	"crypto/rand"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
	"github.com/ckgate/ckgate/internal/emulator"
)

// One fake-gcs-server serves the whole package; every test gets its own
// bucket. STORAGE_EMULATOR_HOST points the client library (and Open) at it.
var (
	emu      *emulator.GCSEmulator
	startErr error
)

func TestMain(m *testing.M) {
	os.Exit(emulator.RunTests(m, func(ctx context.Context) (*emulator.GCSEmulator, error) {
		e, err := emulator.StartFakeGCS(ctx)
		if err == nil {
			os.Setenv(EmulatorHostEnv, e.Host)
		}
		return e, err
	}, &emu, &startErr))
}

// fastRetry makes the library's retries back off for a millisecond, not a
// second.
var fastRetry = storage.WithBackoff(gax.Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond, Multiplier: 2})

// newClient returns a client of the emulator whose transport is rt (nil:
// the default transport) behind emulator.GCSDeleteConditions, which makes
// the emulator honour delete preconditions as Cloud Storage does.
func newClient(t testing.TB, rt http.RoundTripper) *storage.Client {
	t.Helper()
	emulator.Require(t, startErr)
	if rt == nil {
		rt = http.DefaultTransport
	}
	return newRawClient(t, emulator.GCSDeleteConditions(rt))
}

// newRawClient returns a client of the emulator over rt exactly.
func newRawClient(t testing.TB, rt http.RoundTripper) *storage.Client {
	t.Helper()
	emulator.Require(t, startErr)
	c, err := storage.NewClient(context.Background(), option.WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		t.Fatalf("storage client: %v", err)
	}
	c.SetRetry(fastRetry)
	t.Cleanup(func() { c.Close() })
	return c
}

// bucketName returns a fresh, valid bucket name.
func bucketName() string {
	return "ckgate-" + strings.ToLower(rand.Text())
}

// newStoreOn makes a new bucket with client and returns a store on it.
func newStoreOn(t testing.TB, client *storage.Client, prefix string, opts ...Option) *Store {
	t.Helper()
	s := New(client, bucketName(), prefix, append([]Option{WithProject("ckgate-test")}, opts...)...)
	if err := s.MakeBucket(t.Context()); err != nil {
		t.Fatalf("make bucket %s: %v", s.BucketName(), err)
	}
	return s
}

// newStore returns a store on a new, empty bucket of the emulator.
func newStore(t testing.TB) *Store {
	t.Helper()
	return newStoreOn(t, newClient(t, nil), "")
}

func TestConformance(t *testing.T) {
	emulator.Require(t, startErr)
	client := newClient(t, nil)
	storetest.Run(t, func(t *testing.T) gateway.Store { return newStoreOn(t, client, "") })
}
