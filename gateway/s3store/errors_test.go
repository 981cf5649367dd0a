package s3store

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/ckgate/ckgate/gateway"
)

var allKinds = []error{
	gateway.ErrNotFound, gateway.ErrExists, gateway.ErrPrecondition,
	gateway.ErrPermission, gateway.ErrUnavailable, gateway.ErrUnsupported,
	gateway.ErrInvalidKey,
}

// sdkError builds the error the SDK returns for an HTTP answer: an
// OperationError around a ResponseError around the API error.
func sdkError(op string, status int, apiErr error) error {
	return &smithy.OperationError{
		ServiceID:     "S3",
		OperationName: op,
		Err: &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{
				Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
				Err:      apiErr,
			},
			RequestID: "req-1",
		},
	}
}

func generic(code string) error {
	return &smithy.GenericAPIError{Code: code, Message: "m"}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"NoSuchKey", sdkError("GetObject", 404, &types.NoSuchKey{}), gateway.ErrNotFound},
		{"HEAD 404", sdkError("HeadObject", 404, &types.NotFound{}), gateway.ErrNotFound},
		{"NoSuchBucket", sdkError("GetObject", 404, &types.NoSuchBucket{}), gateway.ErrNotFound},
		{"404 without code", sdkError("HeadObject", 404, generic("")), gateway.ErrNotFound},
		{"AccessDenied", sdkError("GetObject", 403, generic("AccessDenied")), gateway.ErrPermission},
		{"HEAD 403 without code", sdkError("HeadObject", 403, generic("Forbidden")), gateway.ErrPermission},
		{"403 unknown code", sdkError("GetObject", 403, generic("SomethingNew")), gateway.ErrPermission},
		{"SignatureDoesNotMatch", sdkError("PutObject", 403, generic("SignatureDoesNotMatch")), gateway.ErrPermission},
		{"InvalidAccessKeyId", sdkError("PutObject", 403, generic("InvalidAccessKeyId")), gateway.ErrPermission},
		{"ExpiredToken", sdkError("PutObject", 400, generic("ExpiredToken")), gateway.ErrPermission},
		{"401", sdkError("PutObject", 401, generic("")), gateway.ErrPermission},
		{"PreconditionFailed", sdkError("PutObject", 412, generic("PreconditionFailed")), gateway.ErrPrecondition},
		{"ConditionalRequestConflict", sdkError("PutObject", 409, generic("ConditionalRequestConflict")), gateway.ErrUnavailable},
		{"OperationAborted", sdkError("PutObject", 409, generic("OperationAborted")), gateway.ErrUnavailable},
		{"SlowDown", sdkError("PutObject", 503, generic("SlowDown")), gateway.ErrUnavailable},
		{"InternalError", sdkError("PutObject", 500, generic("InternalError")), gateway.ErrUnavailable},
		{"429", sdkError("PutObject", 429, generic("TooManyRequests")), gateway.ErrUnavailable},
		{"RequestTimeout", sdkError("PutObject", 400, generic("RequestTimeout")), gateway.ErrUnavailable},
		{"retries spent on 503", &retry.MaxAttemptsError{Attempt: 3, Err: sdkError("PutObject", 503, generic("SlowDown"))}, gateway.ErrUnavailable},
		{"NotImplemented", sdkError("PutObject", 501, generic("NotImplemented")), gateway.ErrUnsupported},
		{"InvalidArgument", sdkError("PutObject", 400, generic("InvalidArgument")), gateway.ErrUnsupported},
		{"InvalidObjectState", sdkError("GetObject", 403, &types.InvalidObjectState{}), gateway.ErrUnsupported},
		{"BucketAlreadyExists", sdkError("CreateBucket", 409, &types.BucketAlreadyExists{}), gateway.ErrExists},
		{"connection timeout", &smithy.OperationError{ServiceID: "S3", OperationName: "PutObject", Err: &smithyhttp.RequestSendError{Err: timeoutError{}}}, gateway.ErrUnavailable},
		{"cancelled", &smithy.OperationError{ServiceID: "S3", OperationName: "PutObject", Err: &smithy.CanceledError{Err: context.Canceled}}, gateway.ErrUnavailable},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), gateway.ErrUnavailable},
		{"no credentials", &smithy.OperationError{ServiceID: "S3", OperationName: "GetObject", Err: &credentialsError{err: errors.New("no EC2 IMDS role found")}}, gateway.ErrPermission},
		{"signing", &smithy.OperationError{ServiceID: "S3", OperationName: "GetObject", Err: &v4.SigningError{Err: errors.New("bad")}}, gateway.ErrPermission},
		{"already a gateway error", gateway.E("get", "k", gateway.ErrInvalidKey, nil), gateway.ErrInvalidKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(tc.err); got != tc.want {
				t.Fatalf("classify = %v, want %v", got, tc.want)
			}
			err := fail("get", "offsets/1", tc.err)
			for _, k := range allKinds {
				if is := errors.Is(err, k); is != (k == tc.want) {
					t.Errorf("errors.Is(%v, %v) = %v", err, k, is)
				}
			}
			var ge *gateway.Error
			if !errors.As(err, &ge) || ge.Key != "offsets/1" || ge.Op != "get" {
				t.Errorf("fail() = %#v, want a *gateway.Error for get offsets/1", err)
			}
			// The SDK's error stays reachable.
			var ae smithy.APIError
			if errors.As(tc.err, &ae) && !errors.As(err, &ae) {
				t.Errorf("smithy.APIError not reachable through %v", err)
			}
			var re *smithyhttp.ResponseError
			if errors.As(tc.err, &re) && !errors.As(err, &re) {
				t.Errorf("ResponseError not reachable through %v", err)
			}
		})
	}
}

// TestPermissionDenied: a client with a wrong secret key is refused by the
// service; every operation reports ErrPermission, never not-found, even for
// keys that do not exist.
func TestPermissionDenied(t *testing.T) {
	good := newStore(t)
	if _, err := good.Put(t.Context(), "exists", []byte("x"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	bad := New(newClient(t, func(o *s3.Options) {
		o.Credentials = credentials.NewStaticCredentialsProvider(emu.AccessKey, "wrong-secret-key", "")
	}), good.d.bucket, "")
	ctx := t.Context()
	for _, key := range []string{"exists", "missing"} {
		_, _, err := bad.Get(ctx, key)
		wantPermission(t, "get", err, key)
		_, err = bad.Stat(ctx, key)
		wantPermission(t, "stat", err, key)
		_, _, err = bad.GetStream(ctx, key)
		wantPermission(t, "get stream", err, key)
		_, err = bad.Put(ctx, key, []byte("y"), gateway.IfAbsent())
		wantPermission(t, "put", err, key)
		_, err = bad.PutStream(ctx, key, strings.NewReader("y"), gateway.None())
		wantPermission(t, "put stream", err, key)
		err = bad.Delete(ctx, key, gateway.None())
		wantPermission(t, "delete", err, key)
	}
	n := 0
	for _, err := range bad.List(ctx, "") {
		n++
		wantPermission(t, "list", err, "")
	}
	if n != 1 {
		t.Errorf("list yielded %d entries, want one error", n)
	}
	if err := bad.MakeBucket(ctx); !errors.Is(err, gateway.ErrPermission) {
		t.Errorf("make bucket: %v, want permission denied", err)
	}
	// Nothing changed.
	if a, err := good.Stat(ctx, "exists"); err != nil || a.Size != 1 {
		t.Fatalf("stat after refused writes: %+v, %v", a, err)
	}
	if _, err := good.Stat(ctx, "missing"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("stat missing: %v", err)
	}
}

func wantPermission(t *testing.T, what string, err error, key string) {
	t.Helper()
	if !errors.Is(err, gateway.ErrPermission) || errors.Is(err, gateway.ErrNotFound) {
		t.Errorf("%s %q: %v, want permission denied (and not not-found)", what, key, err)
		return
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Errorf("%s %q: S3 error not reachable in %v", what, key, err)
	}
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Key != key {
		t.Errorf("%s %q: %v does not name the key", what, key, err)
	}
}

// TestNoCredentials: credentials that cannot be obtained are a permission
// problem, reported before any request is sent, and never "unavailable".
func TestNoCredentials(t *testing.T) {
	good := newStore(t)
	ft := &faultTransport{match: func(*http.Request) bool { return true }, fault: answer(500, "InternalError")}
	s := New(newClient(t, ft.option, func(o *s3.Options) {
		o.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, errors.New("no credential provider found (injected)")
		})
	}), good.d.bucket, "")
	_, _, err := s.Get(t.Context(), "k")
	if !errors.Is(err, gateway.ErrPermission) {
		t.Fatalf("get without credentials: %v, want permission denied", err)
	}
	if !strings.Contains(err.Error(), "injected") {
		t.Errorf("get without credentials: %v does not carry the cause", err)
	}
	if ft.Matched() != 0 {
		t.Errorf("%d requests sent without credentials", ft.Matched())
	}

	// A cancelled context while resolving credentials is not a permission
	// problem.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err = s.Get(ctx, "k")
	if !errors.Is(err, gateway.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("get with a cancelled context: %v, want unavailable and context.Canceled", err)
	}
}

// TestCredentialsErrorRedacted: what a credential process printed (it may
// hold a secret the SDK could not parse) never reaches an error message.
func TestCredentialsErrorRedacted(t *testing.T) {
	cause := errors.New(`failed to refresh cached credentials, parse failed of process output: {"SecretAccessKey":"wJalrXUtnFEMIsecret", error: invalid character`)
	err := fail("get", "k", &smithy.OperationError{ServiceID: "S3", OperationName: "GetObject", Err: &credentialsError{err: cause}})
	if strings.Contains(err.Error(), "wJalrXUtnFEMIsecret") {
		t.Fatalf("error shows the secret: %v", err)
	}
	if !errors.Is(err, gateway.ErrPermission) || !strings.Contains(err.Error(), "process output") {
		t.Fatalf("error %v: want permission denied about the process output", err)
	}
}
