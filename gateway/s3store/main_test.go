package s3store

import (
	"crypto/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/backendtest"
	"github.com/ckgate/ckgate/gateway/storetest"
	"github.com/ckgate/ckgate/internal/emulator"
)

// One versitygw serves the whole package; every test gets its own bucket.
var (
	emu      *emulator.S3Emulator
	startErr error
)

func TestMain(m *testing.M) {
	os.Exit(emulator.RunTests(m, emulator.StartVersitygw, &emu, &startErr))
}

// newClient returns a client of the emulator with the root credentials and
// no retry backoff; mods adjust its options.
func newClient(t testing.TB, mods ...func(*s3.Options)) *s3.Client {
	t.Helper()
	emulator.Require(t, startErr)
	o := s3.Options{
		Region:       emu.Region,
		BaseEndpoint: aws.String(emu.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(emu.AccessKey, emu.SecretKey, ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		}),
	}
	return s3.New(o, mods...)
}

// bucketName returns a fresh, valid bucket name.
func bucketName() string {
	return "ckgate-" + strings.ToLower(rand.Text())
}

// newStoreOn makes a new bucket with client and returns a store on it.
func newStoreOn(t testing.TB, client *s3.Client, prefix string) *Store {
	t.Helper()
	s := New(client, bucketName(), prefix)
	s.d.backoff = time.Millisecond
	if err := s.MakeBucket(t.Context()); err != nil {
		t.Fatalf("make bucket %s: %v", s.d.bucket, err)
	}
	return s
}

// newStore returns a store on a new, empty bucket of the emulator.
func newStore(t testing.TB) *Store {
	t.Helper()
	return newStoreOn(t, newClient(t), "")
}

func TestConformance(t *testing.T) {
	emulator.Require(t, startErr)
	storetest.Run(t, func(t *testing.T) gateway.Store { return newStore(t) })
}

// TestConformanceBackendPrefix runs the suite on stores whose prefix is
// applied by the backend itself (New's prefix), not by gateway.WithPrefix.
func TestConformanceBackendPrefix(t *testing.T) {
	emulator.Require(t, startErr)
	storetest.Run(t, func(t *testing.T) gateway.Store {
		return newStoreOn(t, newClient(t), "tenant/q1")
	})
}

func TestMakeBucketTwice(t *testing.T) {
	backendtest.WantMakeBucketTwice(t, newStore(t))
}
