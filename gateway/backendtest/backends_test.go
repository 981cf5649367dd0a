package backendtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/emulator"
)

// proxy counts the HTTP requests that reach an emulator.
type proxy struct {
	addr  string
	count atomic.Int64
	srv   *http.Server
}

// startProxy forwards to target. rewriteHost sends target's host in the Host
// header (fake-gcs-server reads other hosts as bucket names); S3 and Azure
// sign the host the client used, so theirs is kept.
func startProxy(target string, rewriteHost bool) (*proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{addr: l.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	if rewriteHost {
		direct := rp.Director
		rp.Director = func(r *http.Request) { direct(r); r.Host = u.Host }
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.count.Add(1)
		rp.ServeHTTP(w, r)
	})}
	go p.srv.Serve(l)
	return p, nil
}

// backend opens fresh, empty stores of one kind and counts their requests.
type backend struct {
	name     string
	err      error // why the emulator is not there
	open     func(t testing.TB) gateway.Store
	url      func(t testing.TB) string // a new bucket's (or directory's) URL; open makes and opens one
	requests func() int64              // nil: count with the metrics decorator
}

var (
	all      []*backend
	stopping []func()
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	all = []*backend{fileBackend(), s3Backend(ctx), gcsBackend(ctx), azureBackend(ctx)}
	cancel()
	code := m.Run()
	for _, stop := range stopping {
		stop()
	}
	os.Exit(code)
}

func unique(prefix string) string {
	return prefix + strings.ToLower(rand.Text()[:12])
}

// store opens a new bucket (or directory) of b and makes it.
func (b *backend) store(t testing.TB, raw string) gateway.Store {
	t.Helper()
	st, err := stores.Open(context.Background(), raw)
	if err != nil {
		t.Fatalf("%s: open %s: %v", b.name, raw, err)
	}
	if err := gateway.MakeBucket(context.Background(), st); err != nil {
		t.Fatalf("%s: make bucket %s: %v", b.name, raw, err)
	}
	t.Cleanup(func() { gateway.Close(st) })
	return st
}

func fileBackend() *backend {
	b := &backend{name: "file"}
	b.url = func(t testing.TB) string { return t.TempDir() + "/ck" }
	b.open = func(t testing.TB) gateway.Store { return b.store(t, b.url(t)) }
	return b
}

func s3Backend(ctx context.Context) *backend {
	b := &backend{name: "s3"}
	emu, err := emulator.StartVersitygw(ctx)
	if err != nil {
		b.err = err
		return b
	}
	stopping = append(stopping, emu.Stop)
	p, err := startProxy(emu.Endpoint, false)
	if err != nil {
		b.err = err
		return b
	}
	os.Setenv("AWS_ACCESS_KEY_ID", emu.AccessKey)
	os.Setenv("AWS_SECRET_ACCESS_KEY", emu.SecretKey)
	b.requests = p.count.Load
	b.url = func(testing.TB) string {
		return fmt.Sprintf("s3://%s/ck?region=%s&endpoint=http://%s&path_style=true", unique("ckgate-"), emu.Region, p.addr)
	}
	b.open = func(t testing.TB) gateway.Store { return b.store(t, b.url(t)) }
	return b
}

func gcsBackend(ctx context.Context) *backend {
	b := &backend{name: "gcs"}
	emu, err := emulator.StartFakeGCS(ctx)
	if err != nil {
		b.err = err
		return b
	}
	stopping = append(stopping, emu.Stop)
	p, err := startProxy("http://"+emu.Host, true)
	if err != nil {
		b.err = err
		return b
	}
	os.Setenv("STORAGE_EMULATOR_HOST", p.addr)
	b.requests = p.count.Load
	b.url = func(testing.TB) string { return fmt.Sprintf("gs://%s/ck", unique("ckgate-")) }
	b.open = func(t testing.TB) gateway.Store { return b.store(t, b.url(t)) }
	return b
}

func azureBackend(ctx context.Context) *backend {
	b := &backend{name: "azure"}
	emu, err := emulator.StartAzurite(ctx)
	if err != nil {
		b.err = err
		return b
	}
	stopping = append(stopping, emu.Stop)
	p, err := startProxy(emu.ServiceURL, false)
	if err != nil {
		b.err = err
		return b
	}
	os.Setenv("AZURE_STORAGE_KEY", emu.Key)
	b.requests = p.count.Load
	b.url = func(testing.TB) string {
		return fmt.Sprintf("az://%s/%s/ck?endpoint=http://%s/%s", emu.Account, unique("ckgate"), p.addr, emu.Account)
	}
	b.open = func(t testing.TB) gateway.Store { return b.store(t, b.url(t)) }
	return b
}

// each runs f for every backend as a subtest; a missing emulator fails
// under CI and skips otherwise.
func each(t *testing.T, f func(t *testing.T, b *backend)) {
	for _, b := range all {
		t.Run(b.name, func(t *testing.T) {
			emulator.Require(t, b.err)
			f(t, b)
		})
	}
}
