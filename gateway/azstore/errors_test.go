package azstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// responseError builds the *azcore.ResponseError the SDK returns for a
// service answer with status and x-ms-error-code code.
func responseError(t *testing.T, method string, status int, code string) error {
	t.Helper()
	req, err := http.NewRequest(method, "https://acct.blob.core.windows.net/c/k?sv=2024&sig=SECRETSIG", nil)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	if code != "" {
		h.Set("x-ms-error-code", code)
	}
	resp := &http.Response{
		StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Header: h, Request: req, Body: io.NopCloser(strings.NewReader("")),
	}
	err = runtime.NewResponseError(resp)
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("NewResponseError returned %T", err)
	}
	return err
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout (injected)" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestErrorKinds: every service answer maps to exactly one kind, the
// answers that mean "not allowed" never map to not found, and the SDK
// error stays reachable.
func TestErrorKinds(t *testing.T) {
	cases := []struct {
		status int
		code   string
		want   error
	}{
		{404, "BlobNotFound", gateway.ErrNotFound},
		{404, "ContainerNotFound", gateway.ErrNotFound},
		{404, "ResourceNotFound", gateway.ErrNotFound},
		{404, "", gateway.ErrNotFound}, // HEAD answers carry no body
		{409, "BlobAlreadyExists", gateway.ErrExists},
		{412, "ConditionNotMet", gateway.ErrPrecondition},
		{412, "", gateway.ErrPrecondition},
		{409, "LeaseIdMissing", gateway.ErrPrecondition},
		{409, "LeaseAlreadyPresent", gateway.ErrPrecondition},
		// A bare 409 is retryable on every cloud, never "stale".
		{409, "", gateway.ErrUnavailable},
		{409, "PendingCopyOperation", gateway.ErrUnavailable},
		{501, "", gateway.ErrUnsupported},
		{403, "AuthenticationFailed", gateway.ErrPermission},
		{403, "AuthorizationFailure", gateway.ErrPermission},
		{403, "AuthorizationPermissionMismatch", gateway.ErrPermission},
		{403, "KeyBasedAuthenticationNotPermitted", gateway.ErrPermission},
		{403, "InsufficientAccountPermissions", gateway.ErrPermission},
		{403, "AuthorizationSourceIPMismatch", gateway.ErrPermission},
		{401, "InvalidAuthenticationInfo", gateway.ErrPermission},
		{401, "NoAuthenticationInformation", gateway.ErrPermission},
		{403, "", gateway.ErrPermission},
		// A permission code wins over a not-found status.
		{404, "AuthorizationFailure", gateway.ErrPermission},
		{403, "AccountIsDisabled", gateway.ErrPermission},
		{429, "", gateway.ErrUnavailable},
		{503, "ServerBusy", gateway.ErrUnavailable},
		{500, "OperationTimedOut", gateway.ErrUnavailable},
		{500, "InternalError", gateway.ErrUnavailable},
		{502, "", gateway.ErrUnavailable},
		{408, "", gateway.ErrUnavailable},
		{409, "ContainerBeingDeleted", gateway.ErrUnavailable},
		{400, "InvalidHeaderValue", gateway.ErrUnsupported},
		{400, "InvalidBlockList", gateway.ErrUnsupported},
		{405, "", gateway.ErrUnsupported},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.code), func(t *testing.T) {
			sdk := responseError(t, http.MethodGet, tc.status, tc.code)
			err := e("get", "k", sdk)
			storetest.WantKeyKind(t, "", err, "k", tc.want)
			var re *azcore.ResponseError
			if !errors.As(err, &re) || re.StatusCode != tc.status {
				t.Errorf("the *azcore.ResponseError is not reachable from %v", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("message is not one line: %q", msg)
			}
			if tc.code != "" && !strings.Contains(msg, tc.code) {
				t.Errorf("message %q does not keep the code %s", msg, tc.code)
			}
			if !strings.Contains(msg, fmt.Sprint(tc.status)) {
				t.Errorf("message %q does not keep the status", msg)
			}
			if strings.Contains(msg, "SECRETSIG") {
				t.Errorf("message %q leaks the SAS signature", msg)
			}
		})
	}
}

// TestErrorKindsNotService: failures without a service answer.
func TestErrorKindsNotService(t *testing.T) {
	urlErr := &url.Error{Op: "Get", URL: "https://a.blob.core.windows.net/c/k?sv=1&sig=SECRETSIG&se=2030", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}}
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"timeout", timeoutError{}, gateway.ErrUnavailable},
		{"deadline", context.DeadlineExceeded, gateway.ErrUnavailable},
		{"cancelled", context.Canceled, gateway.ErrUnavailable},
		{"refused", urlErr, gateway.ErrUnavailable},
		{"truncated", io.ErrUnexpectedEOF, gateway.ErrUnavailable},
		{"credential", &credentialError{err: errors.New("DefaultAzureCredential: failed to acquire a token")}, gateway.ErrPermission},
		{"azidentity", &azidentity.AuthenticationFailedError{}, gateway.ErrPermission},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := e("put", "k", tc.err)
			storetest.WantKeyKind(t, "", err, "k", tc.want)
			if !errors.Is(err, tc.err) && !errors.As(err, new(*azidentity.AuthenticationFailedError)) {
				t.Errorf("cause %v not reachable from %v", tc.err, err)
			}
			if strings.Contains(err.Error(), "SECRETSIG") {
				t.Errorf("message %q leaks the SAS signature", err)
			}
		})
	}
}

// TestDescribeRedacts: SAS signatures and account keys are removed from
// the messages of SDK and network errors.
func TestDescribeRedacts(t *testing.T) {
	for in, secret := range map[string]string{
		`Get "https://a.blob.core.windows.net/c/k?se=2030&sig=abc%2Bdef%3D&sp=r": EOF`: "abc%2Bdef%3D",
		`sig=plainsecret`: "plainsecret",
		`AccountName=a;AccountKey=c2VjcmV0a2V5;EndpointSuffix=core.windows.net`: "c2VjcmV0a2V5",
		`x SharedAccessSignature=sv=1&sig=zzzsecret;`:                           "zzzsecret",
	} {
		if got := describe(errors.New(in)); strings.Contains(got, secret) || !strings.Contains(got, "REDACTED") {
			t.Errorf("describe(%q) = %q", in, got)
		}
	}
}

// TestWrongKeyIsPermission: a wrong account key gets AuthenticationFailed
// from the service, which is ErrPermission on every operation, never
// ErrNotFound, and the key never appears in the error.
func TestWrongKeyIsPermission(t *testing.T) {
	requireAzurite(t)
	good := newStore(t, "")
	if _, err := good.Put(t.Context(), "k", []byte("x"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	wrongKey := "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ=="
	cred, err := container.NewSharedKeyCredential(azurite.Account, wrongKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := container.NewClientWithSharedKeyCredential(good.Client().URL(), cred, testClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	s := New(c, "")
	ctx := t.Context()
	_, _, getErr := s.Get(ctx, "k")
	_, statErr := s.Stat(ctx, "k")
	_, missingErr := s.Stat(ctx, "missing")
	_, putErr := s.Put(ctx, "k", []byte("y"), gateway.IfAbsent())
	delErr := s.Delete(ctx, "k", gateway.None())
	var listErr error
	for _, err := range s.List(ctx, "") {
		listErr = err
		break
	}
	for name, err := range map[string]error{"get": getErr, "stat": statErr, "stat missing": missingErr, "put": putErr, "delete": delErr, "list": listErr} {
		t.Run(name, func(t *testing.T) {
			if !errors.Is(err, gateway.ErrPermission) || errors.Is(err, gateway.ErrNotFound) {
				t.Fatalf("error = %v, want permission denied", err)
			}
			if strings.Contains(err.Error(), wrongKey) {
				t.Errorf("message leaks the key: %q", err)
			}
			var re *azcore.ResponseError
			if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden {
				t.Fatalf("no 403 *azcore.ResponseError in %v", err)
			}
			// Azure answers AuthenticationFailed, Azurite AuthorizationFailure;
			// HEAD answers (stat) carry the code in a header only.
			switch re.ErrorCode {
			case "AuthenticationFailed", "AuthorizationFailure":
				if !strings.Contains(err.Error(), re.ErrorCode) {
					t.Errorf("message %q does not name %s", err, re.ErrorCode)
				}
			case "":
				if !strings.HasPrefix(name, "stat") {
					t.Errorf("no error code in %v", err)
				}
			default:
				t.Errorf("error code %q, want AuthenticationFailed or AuthorizationFailure", re.ErrorCode)
			}
		})
	}
	// The blob is untouched.
	got, _, err := good.Get(ctx, "k")
	if err != nil || !bytes.Equal(got, []byte("x")) {
		t.Errorf("after refused writes: %q, %v", got, err)
	}
}

// failingCredential is a token credential that cannot get a token.
type failingCredential struct{}

func (failingCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{}, errors.New("no managed identity endpoint (injected)")
}

// TestCredentialFailureIsPermission: a credential that cannot get a token
// is ErrPermission, not a network failure.
func TestCredentialFailureIsPermission(t *testing.T) {
	requireAzurite(t)
	opts := testClientOptions()
	opts.InsecureAllowCredentialWithHTTP = true
	c, err := container.NewClient(azurite.ServiceURL+"/"+newContainerName(), tokenCredential{failingCredential{}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(c, "").Stat(t.Context(), "k")
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrPermission)
	if !strings.Contains(err.Error(), "credential") {
		t.Errorf("message %q does not say credential", err)
	}
}
