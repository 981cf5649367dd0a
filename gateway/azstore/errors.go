package azstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/ckgate/ckgate/gateway"
)

// Service error codes that mean the principal may not do the request.
var permissionCodes = []bloberror.Code{
	bloberror.AuthenticationFailed,
	bloberror.AuthorizationFailure,
	bloberror.AuthorizationPermissionMismatch,
	bloberror.AuthorizationProtocolMismatch,
	bloberror.AuthorizationResourceTypeMismatch,
	bloberror.AuthorizationServiceMismatch,
	bloberror.AuthorizationSourceIPMismatch,
	bloberror.InsufficientAccountPermissions,
	bloberror.InvalidAuthenticationInfo,
	bloberror.NoAuthenticationInformation,
	bloberror.AccountIsDisabled,
	bloberror.Code("KeyBasedAuthenticationNotPermitted"),
}

// Service error codes that are transient.
var unavailableCodes = []bloberror.Code{
	bloberror.ServerBusy,
	bloberror.OperationTimedOut,
	bloberror.InternalError,
	bloberror.ContainerBeingDeleted,
}

// Service error codes (409 and 412) that refuse the write because of the
// blob's state: a stale ETag or a lease the request does not hold.
var preconditionCodes = []bloberror.Code{
	bloberror.ConditionNotMet,
	bloberror.LeaseIDMissing,
	bloberror.LeaseIDMismatchWithBlobOperation,
	bloberror.LeaseIDMismatchWithLeaseOperation,
	bloberror.LeaseAlreadyPresent,
	bloberror.LeaseNotPresentWithBlobOperation,
	bloberror.LeaseLost,
	bloberror.TargetConditionNotMet,
	bloberror.SourceConditionNotMet,
}

var notFoundCodes = []bloberror.Code{
	bloberror.BlobNotFound,
	bloberror.ContainerNotFound,
	bloberror.ResourceNotFound,
}

// kindOf classifies an error of the SDK, the network or a credential into
// one gateway kind.
func kindOf(err error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return responseKind(re)
	}
	var ce *credentialError
	var afe *azidentity.AuthenticationFailedError
	var are *azidentity.AuthenticationRequiredError
	if errors.As(err, &ce) || errors.As(err, &afe) || errors.As(err, &are) {
		return gateway.ErrPermission
	}
	// Context ends, timeouts, resets, refused connections, DNS failures,
	// truncated bodies: the request may succeed later.
	return gateway.ErrUnavailable
}

func responseKind(re *azcore.ResponseError) error {
	switch {
	case bloberror.HasCode(re, permissionCodes...):
		return gateway.ErrPermission
	case bloberror.HasCode(re, notFoundCodes...):
		return gateway.ErrNotFound
	case bloberror.HasCode(re, bloberror.BlobAlreadyExists):
		return gateway.ErrExists
	case bloberror.HasCode(re, preconditionCodes...):
		return gateway.ErrPrecondition
	case bloberror.HasCode(re, unavailableCodes...):
		return gateway.ErrUnavailable
	}
	if k := gateway.StatusKind(re.StatusCode, gateway.None()); k != nil {
		return k
	}
	return gateway.ErrUnsupported
}

// statusOf returns the HTTP status and service error code of err, if it
// carries a service response.
func statusOf(err error) (int, string) {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode, re.ErrorCode
	}
	return 0, ""
}

// sdkError is the cause kept in a *gateway.Error: a one-line message with
// the status and service error code (the SDK's own message is many lines
// with the response body) and no secrets, while errors.As still reaches the
// SDK error.
type sdkError struct {
	msg string
	err error
}

func (e *sdkError) Error() string { return e.msg }
func (e *sdkError) Unwrap() error { return e.err }

// cause wraps err for a *gateway.Error.
func cause(err error) error {
	if err == nil {
		return nil
	}
	var se *sdkError
	if errors.As(err, &se) {
		return err
	}
	return &sdkError{msg: describe(err), err: err}
}

func describe(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" {
			code = "no error code"
		}
		return fmt.Sprintf("azure: %d %s", re.StatusCode, code)
	}
	var ce *credentialError
	if errors.As(err, &ce) {
		return "azure credential: " + gateway.Redact(firstLine(ce.err.Error()))
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "azure: " + err.Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "azure: connection closed early: " + gateway.Redact(firstLine(err.Error()))
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return "azure: network: " + gateway.Redact(firstLine(err.Error()))
	}
	return "azure: " + gateway.Redact(firstLine(err.Error()))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// e builds the *gateway.Error for an SDK failure of op on key.
func e(op, key string, err error) error {
	return gateway.E(op, key, kindOf(err), cause(err))
}

// credentialError marks a failure to get a token from the credential, so
// that it is told apart from a network failure of the request itself.
type credentialError struct{ err error }

func (e *credentialError) Error() string { return "credential: " + e.err.Error() }
func (e *credentialError) Unwrap() error { return e.err }
func (e *credentialError) NonRetriable() {}
