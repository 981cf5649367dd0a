package s3store

import (
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
)

// recorder keeps the method, copy source and conditions of every request.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method, copySource, copyIfMatch, ifMatch, ifNoneMatch string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{req.Method, req.Header.Get("X-Amz-Copy-Source"),
		req.Header.Get("X-Amz-Copy-Source-If-Match"), req.Header.Get("If-Match"), req.Header.Get("If-None-Match")})
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (r *recorder) take() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

// TestCopyRequests: a plain copy is one CopyObject pinned to the source
// ETag, bytes never passing through; a conditional copy on a server that
// is not Amazon S3 is a GET of the source and a conditional PUT, never a
// CopyObject whose destination condition the server may ignore; on Amazon
// S3 (condCopy) it is one CopyObject carrying If-None-Match / If-Match.
func TestCopyRequests(t *testing.T) {
	var rec recorder
	s := newStoreOn(t, newClient(t, func(o *s3.Options) { o.HTTPClient = &http.Client{Transport: &rec} }), "")
	if s.d.condCopy {
		t.Fatal("a versitygw endpoint is taken for Amazon S3")
	}
	ctx := t.Context()
	v, err := s.Put(ctx, "src", []byte("data"), gateway.None())
	if err != nil {
		t.Fatal(err)
	}
	rec.take()

	if _, err := s.d.Copy(ctx, "src", "plain", v, gateway.None()); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 1 || got[0].method != http.MethodPut || got[0].copySource == "" || got[0].copyIfMatch != string(v) {
		t.Errorf("a plain copy sent %+v, want one CopyObject with x-amz-copy-source-if-match %s", got, v)
	}

	if _, err := s.d.Copy(ctx, "src", "created", v, gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 2 || got[0].method != http.MethodGet || got[0].ifMatch != string(v) ||
		got[1].method != http.MethodPut || got[1].copySource != "" || got[1].ifNoneMatch != "*" {
		t.Errorf("a create-only copy on versitygw sent %+v, want a GET with If-Match and a PUT with If-None-Match: *", got)
	}

	// What Amazon S3 is sent. versitygw 1.8 ignores a CopyObject's
	// destination condition: the copy overwrites, which is why condCopy
	// is off for it.
	s.d.condCopy = true
	if _, err := s.d.Copy(ctx, "src", "created", "", gateway.IfAbsent()); err != nil {
		t.Logf("versitygw refused a create-only CopyObject onto an existing key (%v): it honours the condition now", err)
	}
	got = rec.take()
	if len(got) == 0 || got[0].copySource == "" || got[0].ifNoneMatch != "*" {
		t.Errorf("a create-only copy on Amazon S3 sent %+v, want a CopyObject with If-None-Match: *", got)
	}
	if _, err := s.d.Copy(ctx, "src", "created", "", gateway.IfMatch(`"stale"`)); err == nil {
		t.Log("versitygw ignored If-Match on CopyObject")
	}
	got = rec.take()
	if len(got) == 0 || got[0].copySource == "" || got[0].ifMatch != `"stale"` {
		t.Errorf("an if-match copy on Amazon S3 sent %+v, want a CopyObject with If-Match", got)
	}
}

func TestAWSEndpoint(t *testing.T) {
	for e, want := range map[string]bool{
		"":                                   true,
		"https://s3.eu-west-1.amazonaws.com": true,
		"https://bucket.vpce-1a2b3c4d-5e6f.s3.us-east-1.vpce.amazonaws.com": true,
		"https://s3.cn-north-1.amazonaws.com.cn":                            true,
		"http://127.0.0.1:7070":                                             false,
		"https://minio.example.com":                                         false,
		"https://amazonaws.com.evil.example":                                false,
		"https://s3.example.com/amazonaws.com":                              false,
	} {
		var p *string
		if e != "" {
			p = aws.String(e)
		}
		if got := awsEndpoint(p); got != want {
			t.Errorf("awsEndpoint(%q) = %v, want %v", e, got, want)
		}
	}
}
