package s3serve_test

import (
	"context"
	"net"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/s3serve"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/policy"
)

// serveURL starts s3serve over the store at storeURL (any store URL:
// s3://, gs://, az://, a path) under the default policies and returns its
// endpoint.
func serveURL(tb testing.TB, storeURL string) (endpoint string) {
	tb.Helper()
	st, err := stores.Open(context.Background(), storeURL)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { gateway.Close(st) })
	creds, err := s3serve.ParseCredentials([]byte(testCreds))
	if err != nil {
		tb.Fatal(err)
	}
	eng, err := policy.New(context.Background(), policy.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ready := make(chan struct{})
	srv, err := s3serve.New(s3serve.Config{
		Store:       st,
		Credentials: creds,
		Guard: func(p s3serve.Principal) (gateway.Store, error) {
			g, _, err := policy.Guard(st, policy.GuardConfig{Engine: eng, Principal: policy.Principal{ID: p.ID, Kind: p.Kind},
				StoreURL: storeURL, WriterSession: p.Kind == policy.KindJob, RootOwners: true})
			return g, err
		},
		Ready: func() { close(ready) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(addr) }()
	select {
	case <-ready:
	case err := <-served:
		tb.Fatalf("serve %s: %v", addr, err)
	}
	tb.Cleanup(func() { srv.Shutdown(); <-served })
	return "http://" + addr
}

// BenchmarkServeLatencyOverVersitygw measures 4 KiB PUT and GET p50
// through ckgate serve over an S3 store on versitygw beside versitygw
// direct (the same server, one hop less), side by side in one run.
func BenchmarkServeLatencyOverVersitygw(b *testing.B) {
	vg, err := emulator.StartVersitygw(context.Background())
	emulator.Require(b, err)
	defer vg.Stop()
	vg.SetEnv(b)
	direct := client(vg.Endpoint, vg.AccessKey, vg.SecretKey)
	ctx := context.Background()
	for _, bucket := range []string{"direct", "behind"} {
		if _, err := direct.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
			b.Fatal(err)
		}
	}
	// ckgate serve's bucket ckpt is the prefix ckpt/ of versitygw's bucket
	// "behind".
	q := url.Values{"endpoint": {vg.Endpoint}, "path_style": {"true"}, "region": {vg.Region}}.Encode()
	ep := serveURL(b, "s3://behind?"+q)
	front := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	if _, err := front.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("ckpt")}); err != nil {
		b.Fatal(err)
	}
	n := max(300, b.N)
	b.ResetTimer()
	vPut, vGet := putGet(b, direct, "direct", n)
	cPut, cGet := putGet(b, front, "ckpt", n)
	b.StopTimer()
	benchsum.Record(b, "serve_put_4k_p50_vs_versitygw_direct", float64(cPut)/float64(vPut), "ratio", "<=2")
	benchsum.Record(b, "serve_get_4k_p50_vs_versitygw_direct", float64(cGet)/float64(vGet), "ratio", "<=2")
	benchsum.Record(b, "serve_over_versitygw_put_4k_p50", float64(cPut.Microseconds()), "µs", "-")
	benchsum.Record(b, "serve_over_versitygw_get_4k_p50", float64(cGet.Microseconds()), "µs", "-")
	benchsum.Record(b, "versitygw_direct_put_4k_p50", float64(vPut.Microseconds()), "µs", "-")
	benchsum.Record(b, "versitygw_direct_get_4k_p50", float64(vGet.Microseconds()), "µs", "-")
}
