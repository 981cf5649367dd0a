package s3serve_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/s3store"
	"github.com/ckgate/ckgate/internal/faultproxy"
)

// engineThrough is ckgate's own S3 driver (what `ckgate run --checkpoint
// s3://ckpt/ROOT?endpoint=` opens), signing as the job principal, with the SDK's
// retries on, reaching the front door at endpoint through a fault proxy:
// the network between the engine and a `ckgate serve` that applies a
// request and then dies (or is cut off) before it answers.
func engineThrough(t *testing.T, endpoint, root string) (gateway.Store, *faultproxy.Proxy) {
	t.Helper()
	p, err := faultproxy.Start(faultproxy.Options{Target: endpoint, Provider: faultproxy.S3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	client := s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(p.URL()),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("ORDERSJOB", "orders-secret-0123456789", ""),
		HTTPClient:   &http.Client{Timeout: 2 * time.Second},
	})
	return s3store.New(client, "ckpt", root), p
}

// firstPut faults the first object PUT through the proxy.
func firstPut(kind faultproxy.Kind) *faultproxy.Rule {
	return &faultproxy.Rule{Method: http.MethodPut, Nth: 1, Faults: []faultproxy.Kind{kind}}
}

// TestServeSettlesTheEnginesRetriedWrites: a conditional write of ckgate's
// engine that the front door applied but whose answer was lost (dropped,
// reset, or the request delivered twice) comes back from the SDK's retry
// as refused; the stores behind the front door keep no object metadata,
// so the driver cannot read its write id back. The front door answers the
// retry as applied when the stored bytes are the request's: a create of a
// log entry and of a state file, and the writer record's compare-and-swap,
// all end as "this writer won". A second writer still loses, and a write
// that lost to other bytes stays lost.
func TestServeSettlesTheEnginesRetriedWrites(t *testing.T) {
	ep, dir := serve(t)
	for _, kind := range []faultproxy.Kind{faultproxy.DropResponse, faultproxy.ResetAfter, faultproxy.Duplicate} {
		t.Run(string(kind), func(t *testing.T) {
			root := "q-" + string(kind)
			st, p := engineThrough(t, ep, root)
			ctx := t.Context()
			for _, key := range []string{"offsets/0", "state/0/3/1_" + strings.ToLower(rand.Text()[:12]) + ".delta"} {
				data := []byte(key + " epoch 1 " + rand.Text())
				p.SetRules(firstPut(kind))
				v, err := st.Put(ctx, key, data, gateway.IfAbsent())
				if err != nil {
					t.Fatalf("create of %s after %s: %v (want: this writer won)", key, kind, err)
				}
				wantFault(t, p, kind)
				wantOnDisk(t, dir, root, key, data)
				if got, _, err := st.Get(ctx, key); err != nil || !bytes.Equal(got, data) {
					t.Fatalf("get %s: %q, %v", key, got, err)
				}
				if a, err := st.Stat(ctx, key); err != nil || a.Version != v {
					t.Fatalf("stat %s: %+v, %v; want version %q", key, a, err, v)
				}
				p.SetRules()
				if _, err := st.Put(ctx, key, []byte("a second writer"), gateway.IfAbsent()); !errors.Is(err, gateway.ErrExists) {
					t.Fatalf("second create of %s: %v, want ErrExists", key, err)
				}
			}
			// the writer record: created, then swapped under a fault
			p.SetRules()
			v1, err := st.Put(ctx, gateway.WriterKey, []byte("epoch=1 "+rand.Text()), gateway.IfAbsent())
			if err != nil {
				t.Fatal(err)
			}
			p.SetRules(firstPut(kind))
			next := []byte("epoch=2 " + rand.Text())
			v2, err := st.Put(ctx, gateway.WriterKey, next, gateway.IfMatch(v1))
			if err != nil {
				t.Fatalf("CAS of the writer record after %s: %v (want: this writer won)", kind, err)
			}
			wantFault(t, p, kind)
			wantOnDisk(t, dir, root, gateway.WriterKey, next)
			p.SetRules()
			if _, err := st.Put(ctx, gateway.WriterKey, []byte("zombie"), gateway.IfMatch(v1)); !errors.Is(err, gateway.ErrPrecondition) {
				t.Fatalf("stale CAS: %v, want ErrPrecondition", err)
			}
			if _, err := st.Put(ctx, gateway.WriterKey, []byte("epoch=3"), gateway.IfMatch(v2)); err != nil {
				t.Fatalf("CAS on the version the settled retry returned: %v", err)
			}
		})
	}
	t.Run("lost race stays lost", func(t *testing.T) {
		root := "q-lost"
		st, p := engineThrough(t, ep, root)
		ctx := t.Context()
		winner := []byte("offsets 0 epoch 2 (the winner)")
		if _, err := st.Put(ctx, "offsets/0", winner, gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
		p.SetRules(firstPut(faultproxy.DropResponse))
		_, err := st.Put(ctx, "offsets/0", []byte("offsets 0 epoch 1 (a zombie)"), gateway.IfAbsent())
		if !errors.Is(err, gateway.ErrExists) {
			t.Fatalf("create onto another writer's offsets/0 after a dropped answer: %v, want ErrExists", err)
		}
		wantFault(t, p, faultproxy.DropResponse)
		wantOnDisk(t, dir, root, "offsets/0", winner)
	})
}

func wantFault(t *testing.T, p *faultproxy.Proxy, kind faultproxy.Kind) {
	t.Helper()
	if p.Counts()[kind] == 0 {
		t.Fatalf("the proxy injected no %s: the test proves nothing", kind)
	}
}

func wantOnDisk(t *testing.T, dir, root, key string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, "ckpt", root, filepath.FromSlash(key)))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s on disk: %q (%v), want %q", key, got, err, want)
	}
}
