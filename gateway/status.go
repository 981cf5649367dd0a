package gateway

import "net/http"

// StatusKind is the one mapping of an HTTP status a cloud store answered
// to an error kind, shared by every cloud backend; a backend consults its
// own error codes (S3 codes, GCS reasons, Azure error codes) first and
// StatusKind for the rest. c is the condition the request carried: a 412
// refuses IfAbsent as ErrExists and anything else as ErrPrecondition. It
// returns nil when status is no error status (0: no answer at all; the
// backend decides, a transport failure being ErrUnavailable).
//
//   - 401, 403: ErrPermission (never not-found: an access validator must
//     tell a refusal from a miss);
//   - 404: ErrNotFound;
//   - 412: ErrExists for IfAbsent, ErrPrecondition otherwise;
//   - 408, 409, 429 and 5xx but 501: ErrUnavailable. A bare 409 is the
//     service saying another request on the same name is in flight (S3's
//     ConditionalRequestConflict, GCS's conflict, Azure's lease and copy
//     states): it may succeed when retried, and it is never "exists"; a
//     backend maps the codes that do mean exists (Azure's
//     BlobAlreadyExists on a create-only write) itself;
//   - 501 and any other 4xx: ErrUnsupported (the service will not accept
//     the request as sent; retrying cannot help).
func StatusKind(status int, c Cond) error {
	switch {
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return ErrPermission
	case status == http.StatusNotFound:
		return ErrNotFound
	case status == http.StatusPreconditionFailed:
		if c.Kind == CondIfAbsent {
			return ErrExists
		}
		return ErrPrecondition
	case status == http.StatusNotImplemented:
		return ErrUnsupported
	case status == http.StatusRequestTimeout, status == http.StatusConflict,
		status == http.StatusTooManyRequests, status >= 500:
		return ErrUnavailable
	case status >= 400:
		return ErrUnsupported
	}
	return nil
}
