package s3store

import (
	"context"
	"errors"
	"strings"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go"

	"github.com/ckgate/ckgate/gateway"
)

// S3 error codes the backend treats specially.
const (
	codePreconditionFailed = "PreconditionFailed"
	codeConditionConflict  = "ConditionalRequestConflict"
	codeNoSuchUpload       = "NoSuchUpload"
)

// credentialsError marks a failure to obtain or use credentials before any
// request was sent (no provider, an expired SSO session, a failed
// assume-role). It is a permission problem, never a transient one.
type credentialsError struct{ err error }

// Error describes the failure without what a credential process printed:
// the SDK quotes unparsable process output, which may hold a secret.
func (e *credentialsError) Error() string {
	msg := e.err.Error()
	const marker = "process output: "
	if i := strings.Index(msg, marker); i >= 0 {
		msg = msg[:i+len(marker)] + "(output redacted)"
	}
	return "credentials: " + msg
}
func (e *credentialsError) Unwrap() error { return e.err }

// errorCode returns the S3 error code of err ("NoSuchKey", "AccessDenied",
// ...) or "" when err carries none.
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// httpStatus returns the HTTP status of the response behind err, or 0 when
// no response was received.
func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// classify maps an SDK error to one of the gateway error kinds. It never
// maps a refusal (401/403) to not-found, and anything that may succeed when
// retried (throttling, 5xx, timeouts, a concurrent conditional write in
// flight) to ErrUnavailable.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if k := gateway.KindOf(err); k != nil {
		return k
	}
	var ce *credentialsError
	var se *v4.SigningError
	if errors.As(err, &ce) || errors.As(err, &se) {
		return gateway.ErrPermission
	}
	switch errorCode(err) {
	case "NoSuchKey", "NotFound", "NoSuchBucket", "NoSuchVersion":
		return gateway.ErrNotFound
	case "AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch",
		"ExpiredToken", "InvalidToken", "TokenRefreshRequired", "AllAccessDisabled",
		"AccountProblem", "InvalidSecurity", "Unauthorized":
		return gateway.ErrPermission
	case codePreconditionFailed:
		return gateway.ErrPrecondition
	case "BucketAlreadyExists":
		return gateway.ErrExists
	case codeConditionConflict, "OperationAborted", "SlowDown", "Throttling",
		"ThrottlingException", "RequestTimeout", "RequestTimeTooSkewed", "InternalError",
		"ServiceUnavailable", "RequestLimitExceeded", "TooManyRequestsException":
		return gateway.ErrUnavailable
	case "NotImplemented", "InvalidObjectState":
		// InvalidObjectState: an archived object that must be restored first.
		return gateway.ErrUnsupported
	}
	// A 412 is a refused condition, told apart from a lost race by the
	// caller, which knows the condition (see refused).
	if k := gateway.StatusKind(httpStatus(err), gateway.None()); k != nil {
		return k
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return gateway.ErrUnavailable
	}
	// No response at all: connection refused or reset, DNS, timeouts, the
	// SDK's retry budget spent on them.
	return gateway.ErrUnavailable
}

// fail wraps err once as a *gateway.Error of its kind for op and key.
func fail(op, key string, err error) error {
	return gateway.E(op, key, classify(err), err)
}
