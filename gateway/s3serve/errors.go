package s3serve

import (
	"errors"
	"net/http"
	"syscall"

	"github.com/versity/versitygw/s3err"

	"github.com/ckgate/ckgate/gateway"
)

var errReadOnly = errors.New("ckgate serve: accounts come from the credentials file only")

// s3Error maps a store or guard error to the S3 error a client expects. A
// lost create-only race and a stale condition are both 412
// PreconditionFailed (never 409, which S3 clients retry); a policy refusal
// is 403 AccessDenied naming the rule.
func s3Error(err error) error {
	var api s3err.S3Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &api):
		// versitygw's own error, e.g. from reading the request body
		// (IncompleteBody, BadDigest, a bad chunk size): the client's fault.
		return api
	case errors.Is(err, gateway.ErrDenied):
		return s3err.APIError{Code: "AccessDenied", Description: err.Error(), HTTPStatusCode: http.StatusForbidden}
	case errors.Is(err, gateway.ErrNotFound):
		return s3err.GetAPIError(s3err.ErrNoSuchKey)
	case errors.Is(err, gateway.ErrExists), errors.Is(err, gateway.ErrPrecondition):
		return s3err.GetAPIError(s3err.ErrPreconditionFailed)
	case errors.Is(err, gateway.ErrPermission):
		return s3err.APIError{Code: "AccessDenied", Description: "the backend refused ckgate: " + err.Error(), HTTPStatusCode: http.StatusForbidden}
	case errors.Is(err, gateway.ErrKeyTooLong), errors.Is(err, syscall.ENAMETOOLONG):
		// longer than S3's 1024 bytes, or a segment longer than the
		// local disk's file names (255 bytes on most file systems)
		return s3err.GetAPIError(s3err.ErrKeyTooLong)
	case errors.Is(err, gateway.ErrInvalidKey):
		return s3err.APIError{Code: "InvalidArgument", Description: err.Error(), HTTPStatusCode: http.StatusBadRequest}
	case errors.Is(err, gateway.ErrUnsupported):
		return s3err.APIError{Code: "NotImplemented", Description: err.Error(), HTTPStatusCode: http.StatusNotImplemented}
	case errors.Is(err, gateway.ErrUnavailable):
		return s3err.APIError{Code: "ServiceUnavailable", Description: err.Error(), HTTPStatusCode: http.StatusServiceUnavailable}
	}
	return s3err.APIError{Code: "InternalError", Description: err.Error(), HTTPStatusCode: http.StatusInternalServerError}
}
