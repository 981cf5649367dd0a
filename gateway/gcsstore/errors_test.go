package gcsstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/storage"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
	"github.com/ckgate/ckgate/internal/emulator"
)

func TestErrorMapping(t *testing.T) {
	apiErr := func(code int, reason string) error {
		e := &googleapi.Error{Code: code, Message: http.StatusText(code)}
		if reason != "" {
			e.Errors = []googleapi.ErrorItem{{Reason: reason, Message: http.StatusText(code)}}
		}
		return e
	}
	tokenErr := func(code int) error {
		return &auth.Error{Response: &http.Response{StatusCode: code}, Err: errors.New("token refused")}
	}
	tests := []struct {
		name string
		cond gateway.Cond
		err  error
		want error
	}{
		{"403 forbidden", gateway.None(), apiErr(403, "forbidden"), gateway.ErrPermission},
		{"403 on a conditional write", gateway.IfAbsent(), apiErr(403, "forbidden"), gateway.ErrPermission},
		{"401 unauthenticated", gateway.None(), apiErr(401, "required"), gateway.ErrPermission},
		{"404", gateway.None(), apiErr(404, "notFound"), gateway.ErrNotFound},
		{"object does not exist", gateway.None(), storage.ErrObjectNotExist, gateway.ErrNotFound},
		{"bucket does not exist", gateway.None(), storage.ErrBucketNotExist, gateway.ErrNotFound},
		{"412 create-only", gateway.IfAbsent(), apiErr(412, "conditionNotMet"), gateway.ErrExists},
		{"412 compare-and-swap", gateway.IfMatch("7"), apiErr(412, "conditionNotMet"), gateway.ErrPrecondition},
		{"412 without a condition", gateway.None(), apiErr(412, "conditionNotMet"), gateway.ErrPrecondition},
		{"408", gateway.None(), apiErr(408, ""), gateway.ErrUnavailable},
		{"409", gateway.IfAbsent(), apiErr(409, "conflict"), gateway.ErrUnavailable},
		{"429 rate limit", gateway.IfAbsent(), apiErr(429, "rateLimitExceeded"), gateway.ErrUnavailable},
		{"500", gateway.None(), apiErr(500, "backendError"), gateway.ErrUnavailable},
		{"503", gateway.IfMatch("3"), apiErr(503, "backendError"), gateway.ErrUnavailable},
		{"400", gateway.None(), apiErr(400, "invalid"), gateway.ErrUnsupported},
		{"501", gateway.None(), apiErr(501, "notImplemented"), gateway.ErrUnsupported},
		{"409 compare-and-swap", gateway.IfMatch("7"), apiErr(409, "conflict"), gateway.ErrUnavailable},
		{"wrapped 412", gateway.IfAbsent(), fmt.Errorf("upload: %w", apiErr(412, "conditionNotMet")), gateway.ErrExists},
		{"cancelled", gateway.None(), context.Canceled, gateway.ErrUnavailable},
		{"deadline", gateway.None(), fmt.Errorf("read: %w", context.DeadlineExceeded), gateway.ErrUnavailable},
		{"transport", gateway.None(), &url.Error{Op: "Get", URL: "http://x", Err: errors.New("connection reset by peer")}, gateway.ErrUnavailable},
		{"unexpected EOF", gateway.None(), io.ErrUnexpectedEOF, gateway.ErrUnavailable},
		{"token refused", gateway.None(), tokenErr(400), gateway.ErrPermission},
		{"token endpoint down", gateway.None(), tokenErr(503), gateway.ErrUnavailable},
		{"oauth2 refused", gateway.None(), &oauth2.RetrieveError{Response: &http.Response{StatusCode: 401}}, gateway.ErrPermission},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := wrap(context.Background(), "put", "commits/1", tc.cond, tc.err)
			storetest.WantKeyKind(t, "", err, "commits/1", tc.want)
			if !errors.Is(err, tc.err) {
				t.Errorf("the library error %q is not reachable from %q", tc.err, err)
			}
			var ge *googleapi.Error
			if errors.As(tc.err, new(*googleapi.Error)) && !errors.As(err, &ge) {
				t.Errorf("*googleapi.Error not reachable with errors.As from %q", err)
			}
		})
	}
}

func TestWrapNamesCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := wrap(ctx, "get", "k", gateway.None(), errors.New("stream closed"))
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrUnavailable)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%q does not name the cancellation", err)
	}
}

// statusTransport answers every request with code and a JSON error body,
// counting requests.
type statusTransport struct {
	code int
	n    atomic.Int32
}

func (s *statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.n.Add(1)
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	body := fmt.Sprintf(`{"error":{"code":%d,"message":"injected %d","errors":[{"reason":"injected","message":"injected"}]}}`, s.code, s.code)
	return emulator.Response(req, s.code, "application/json", body), nil
}

// TestServiceErrors drives every operation against a service that answers
// one status, end to end through the client library. With WithMaxAttempts
// (2) a retryable status is tried twice, a permanent one once.
func TestServiceErrors(t *testing.T) {
	for _, tc := range []struct {
		code     int
		want     error
		attempts int32
	}{
		{403, gateway.ErrPermission, 1},
		{401, gateway.ErrPermission, 1},
		{429, gateway.ErrUnavailable, 2},
		{503, gateway.ErrUnavailable, 2},
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			rt := &statusTransport{code: tc.code}
			s := New(newRawClient(t, rt), "some-bucket", "pfx", WithMaxAttempts(2))
			ctx := t.Context()
			const key = "offsets/1"
			check := func(what string, err error, key string) {
				t.Helper()
				storetest.WantKeyKind(t, "", err, key, tc.want)
				var ge *googleapi.Error
				if !errors.As(err, &ge) || ge.Code != tc.code {
					t.Errorf("%s: *googleapi.Error with code %d not reachable from %q", what, tc.code, err)
				}
				if n := rt.n.Swap(0); n < 1 || n > tc.attempts {
					t.Errorf("%s: %d requests, want 1 to %d", what, n, tc.attempts)
				}
			}
			_, _, err := s.Get(ctx, key)
			check("get", err, key)
			_, err = s.Stat(ctx, key)
			check("stat", err, key)
			rc, _, err := s.GetStream(ctx, key)
			if rc != nil {
				rc.Close()
			}
			check("get stream", err, key)
			for _, c := range []gateway.Cond{gateway.None(), gateway.IfAbsent(), gateway.IfMatch("12")} {
				_, err = s.Put(ctx, key, []byte("x"), c)
				check("put "+c.String(), err, key)
				_, err = s.PutStream(ctx, key, strings.NewReader("x"), c)
				check("put stream "+c.String(), err, key)
			}
			check("delete", s.Delete(ctx, key, gateway.None()), key)
			check("delete if-match", s.Delete(ctx, key, gateway.IfMatch("12")), key)
			n := 0
			for _, err := range s.List(ctx, "offsets/") {
				n++
				check("list", err, "offsets/")
			}
			if n != 1 {
				t.Errorf("list yielded %d entries, want one error", n)
			}
		})
	}
}

// TestRetryableIsRetried: the library retries 503 for idempotent requests
// (a conditional write) and the store reports success once the service
// recovers.
func TestRetryableIsRetried(t *testing.T) {
	s := newStore(t)
	flaky := &failFirst{match: isUpload, forward: false, status: http.StatusServiceUnavailable}
	s2 := New(newClient(t, flaky), s.BucketName(), "")
	v, err := s2.Put(t.Context(), "commits/0", []byte("c0"), gateway.IfAbsent())
	if err != nil {
		t.Fatalf("put after a 503: %v", err)
	}
	if flaky.n.Load() < 2 {
		t.Fatalf("upload requests = %d, want a retry", flaky.n.Load())
	}
	wantObject(t, s, "commits/0", "c0", v)
}
