package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestKindName: every kind has one stable name, and an outcome of a whole
// step (fenced, unknown outcome) names the error that wraps a store error.
func TestKindName(t *testing.T) {
	storeErr := gateway.E("put", "commits/3", gateway.ErrExists, nil)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("plain"), ""},
		{gateway.E("get", "k", gateway.ErrNotFound, nil), "not_found"},
		{storeErr, "exists"},
		{gateway.E("put", "k", gateway.ErrPrecondition, nil), "precondition"},
		{gateway.E("put", "k", gateway.ErrPermission, nil), "permission"},
		{gateway.E("put", "k", gateway.ErrUnavailable, nil), "unavailable"},
		{gateway.E("put", "k", gateway.ErrUnsupported, nil), "unsupported"},
		{gateway.E("put", "k", gateway.ErrInvalidKey, nil), "invalid_key"},
		{fmt.Errorf("read: %w", gateway.ErrTooLarge), "too_large"},
		{fmt.Errorf("%w: s3:bucket", gateway.ErrInvalidURL), "invalid_url"},
		{fmt.Errorf("put: %w", gateway.ErrDenied), "denied"},
		{fmt.Errorf("%w: epoch 4 (%w)", gateway.ErrFenced, storeErr), "fenced"},
		{fmt.Errorf("%w: held by q1", gateway.ErrInUse), "in_use"},
		{gateway.E("put", "k", gateway.ErrUnknownOutcome, storeErr), "unknown_outcome"},
	} {
		if got := gateway.KindName(tc.err); got != tc.want {
			t.Errorf("KindName(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestMetricsLabelIsKindName: the failure counter's kind label is
// KindName's spelling, the one reports and drills use.
func TestMetricsLabelIsKindName(t *testing.T) {
	m, err := gateway.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	f := gateway.NewFaults(gateway.Fault{Op: gateway.OpGet, Prefix: "boom", Action: gateway.FailBefore})
	s := m.Wrap(f.Wrap(memstore.New()), "mem")
	_, _, gerr := s.Get(context.Background(), "boom")
	name := gateway.KindName(gerr)
	if name == "" {
		t.Fatalf("injected fault %v has no kind name", gerr)
	}
	if n := testutil.CollectAndCount(m.FailureCounter()); n != 1 {
		t.Fatalf("%d failure series, want 1", n)
	}
	if got := testutil.ToFloat64(m.FailureCounter().WithLabelValues("mem", string(gateway.OpGet), name)); got != 1 {
		t.Fatalf("failures{kind=%q} = %v, want 1", name, got)
	}
}

// TestStatusKind: one mapping of HTTP statuses for every cloud; a bare 409
// is retryable, never "exists" or "stale".
func TestStatusKind(t *testing.T) {
	for _, tc := range []struct {
		status int
		c      gateway.Cond
		want   error
	}{
		{0, gateway.None(), nil},
		{http.StatusOK, gateway.None(), nil},
		{http.StatusNotModified, gateway.None(), nil},
		{http.StatusUnauthorized, gateway.None(), gateway.ErrPermission},
		{http.StatusForbidden, gateway.IfAbsent(), gateway.ErrPermission},
		{http.StatusNotFound, gateway.IfMatch("1"), gateway.ErrNotFound},
		{http.StatusPreconditionFailed, gateway.IfAbsent(), gateway.ErrExists},
		{http.StatusPreconditionFailed, gateway.IfMatch("1"), gateway.ErrPrecondition},
		{http.StatusPreconditionFailed, gateway.None(), gateway.ErrPrecondition},
		{http.StatusConflict, gateway.IfAbsent(), gateway.ErrUnavailable},
		{http.StatusConflict, gateway.IfMatch("1"), gateway.ErrUnavailable},
		{http.StatusRequestTimeout, gateway.None(), gateway.ErrUnavailable},
		{http.StatusTooManyRequests, gateway.None(), gateway.ErrUnavailable},
		{http.StatusInternalServerError, gateway.None(), gateway.ErrUnavailable},
		{http.StatusServiceUnavailable, gateway.None(), gateway.ErrUnavailable},
		{http.StatusNotImplemented, gateway.None(), gateway.ErrUnsupported},
		{http.StatusBadRequest, gateway.None(), gateway.ErrUnsupported},
		{http.StatusMethodNotAllowed, gateway.None(), gateway.ErrUnsupported},
		{http.StatusRequestEntityTooLarge, gateway.None(), gateway.ErrUnsupported},
	} {
		if got := gateway.StatusKind(tc.status, tc.c); got != tc.want {
			t.Errorf("StatusKind(%d, %v) = %v, want %v", tc.status, tc.c, got, tc.want)
		}
	}
}

// TestRefusedSettle: the one answer to an ambiguous conditional write.
func TestRefusedSettle(t *testing.T) {
	refusal := errors.New("412 PreconditionFailed")
	absent := errors.New("404 NoSuchKey")
	down := errors.New("connection reset")
	missing := func(err error) bool { return err == absent }
	read := func(v gateway.Version, mine bool, err error) func(context.Context) (gateway.Version, bool, error) {
		return func(context.Context) (gateway.Version, bool, error) { return v, mine, err }
	}
	for _, tc := range []struct {
		name    string
		c       gateway.Cond
		retried bool
		mine    func(context.Context) (gateway.Version, bool, error)
		wantV   gateway.Version
		want    error
	}{
		{"own write seen again", gateway.IfAbsent(), true, read("v1", true, nil), "v1", nil},
		{"own write without a retry", gateway.IfMatch("v0"), false, read("v2", true, nil), "v2", nil},
		{"another writer's object", gateway.IfAbsent(), true, read("v1", false, nil), "", gateway.ErrExists},
		{"stale version", gateway.IfMatch("v0"), true, read("v1", false, nil), "", gateway.ErrPrecondition},
		{"read-back fails after a retry", gateway.IfAbsent(), true, read("", false, down), "", gateway.ErrUnknownOutcome},
		{"read-back fails after a retry (CAS)", gateway.IfMatch("v0"), true, read("", false, down), "", gateway.ErrUnknownOutcome},
		{"read-back fails, no retry", gateway.IfAbsent(), false, read("", false, down), "", gateway.ErrExists},
		{"deleted since", gateway.IfMatch("v0"), true, read("", false, absent), "", gateway.ErrPrecondition},
		{"no read-back", gateway.IfAbsent(), true, nil, "", gateway.ErrExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gateway.Refused{Op: "put", Key: "offsets/7", Cond: tc.c, Err: refusal, Retried: tc.retried}
			v, err := r.Settle(context.Background(), tc.mine, missing)
			if v != tc.wantV {
				t.Errorf("version %q, want %q", v, tc.wantV)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("error %v, want success", err)
				}
				return
			}
			if gateway.KindOf(err) != tc.want || errors.Is(err, gateway.ErrUnavailable) {
				t.Fatalf("error %v: kind %v, want %v", err, gateway.KindOf(err), tc.want)
			}
			if !errors.Is(err, refusal) {
				t.Errorf("error %v does not keep the refusal", err)
			}
			var ge *gateway.Error
			if !errors.As(err, &ge) || ge.Key != "offsets/7" {
				t.Errorf("error %v does not name the key", err)
			}
		})
	}
}

// TestURLErrorsAreInvalidURL: every malformed URL, whatever the step that
// refuses it, wraps ErrInvalidURL.
func TestURLErrorsAreInvalidURL(t *testing.T) {
	reg := gateway.NewRegistry().Register("file", func(context.Context, *url.URL) (gateway.Store, error) { return memstore.New(), nil })
	for _, raw := range []string{"", "s3:bucket", "gs:/b", "s3://b/%zz", "ftp://host/x"} {
		_, err := reg.Open(context.Background(), raw)
		if !errors.Is(err, gateway.ErrInvalidURL) {
			t.Errorf("open %q: %v, want ErrInvalidURL", raw, err)
		}
	}
}
