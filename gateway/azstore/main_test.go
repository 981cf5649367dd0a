package azstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/backendtest"
	"github.com/ckgate/ckgate/internal/emulator"
)

// One Azurite serves the whole package. It starts with the first test
// that needs it (so unit tests and fuzz workers run without it) and stops
// in TestMain.
var (
	azuriteOnce sync.Once
	azurite     *emulator.AzureEmulator
	startErr    error
)

// requireAzurite starts Azurite once, then fails (CI set) or skips t when
// it is unavailable.
func requireAzurite(t testing.TB) {
	t.Helper()
	azuriteOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		azurite, startErr = emulator.StartAzurite(ctx)
	})
	emulator.Require(t, startErr)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if azurite != nil {
		if code != 0 {
			fmt.Fprintf(os.Stderr, "azurite logs:\n%s\n", azurite.Logs())
		}
		azurite.Stop()
	}
	os.Exit(code)
}

// newContainerName returns a fresh container name (3-63 lowercase chars).
func newContainerName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "ckgate-" + hex.EncodeToString(b[:])
}

// testClientOptions are ClientOptions with quick retries, for tests.
func testClientOptions() *container.ClientOptions {
	o := ClientOptions()
	o.Retry = policy.RetryOptions{MaxRetries: 3, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}
	return o
}

// newClient returns a client of a new container (not created) on Azurite
// with the development account's shared key.
func newClient(t testing.TB, opts *container.ClientOptions) *container.Client {
	t.Helper()
	requireAzurite(t)
	cred, err := container.NewSharedKeyCredential(azurite.Account, azurite.Key)
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = testClientOptions()
	}
	c, err := container.NewClientWithSharedKeyCredential(azurite.ServiceURL+"/"+newContainerName(), cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newStore returns a Store on a new, created container that is deleted
// when the test ends.
func newStore(t testing.TB, prefix string) *Store {
	t.Helper()
	return newStoreWith(t, prefix, nil)
}

func newStoreWith(t testing.TB, prefix string, opts *container.ClientOptions) *Store {
	t.Helper()
	s := New(newClient(t, opts), prefix)
	makeBucket(t, s)
	return s
}

func makeBucket(t testing.TB, s *Store) {
	t.Helper()
	if err := s.MakeBucket(t.Context()); err != nil {
		t.Fatalf("make bucket: %v", err)
	}
	t.Cleanup(func() {
		// t.Context is done in cleanups.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := s.Client().Delete(ctx, nil); err != nil {
			t.Errorf("delete container: %v", err)
		}
	})
}

var _ gateway.Store = (*Store)(nil)

func TestMakeBucketTwice(t *testing.T) {
	backendtest.WantMakeBucketTwice(t, newStore(t, ""))
}
