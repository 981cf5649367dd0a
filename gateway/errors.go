package gateway

import (
	"errors"
	"strconv"
)

// Error kinds. Check them with errors.Is; never compare error strings.
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: a create-only (IfAbsent) write found the key already present.
	ErrExists = errors.New("already exists")
	// ErrPrecondition: a compare-and-swap (IfMatch) saw a different version.
	ErrPrecondition = errors.New("precondition failed (stale version)")
	// ErrPermission: the principal may not do this. Never reported as not found.
	ErrPermission = errors.New("permission denied")
	// ErrUnavailable: a transient failure (timeout, throttling, 5xx); retryable.
	ErrUnavailable = errors.New("unavailable")
	// ErrUnsupported: the backend cannot honour the requested condition or operation.
	ErrUnsupported = errors.New("unsupported")
	// ErrInvalidKey: the key is empty, absolute, has '..', NUL, or escapes the
	// root, or it names something no store holds (a FIFO, a device or a socket
	// on the local disk: see NotRegular).
	ErrInvalidKey = errors.New("invalid key")
	// ErrTooLarge: the object is larger than the reader's bound (see
	// GetBounded); it was not read.
	ErrTooLarge = errors.New("too large to read")

	// ErrDenied: a policy refused the mutation.
	ErrDenied = errors.New("denied by policy")
	// ErrFenced: a newer writer owns the checkpoint; this session may not write.
	ErrFenced = errors.New("fenced by a newer writer")
	// ErrInUse: a live writer owns the checkpoint.
	ErrInUse = errors.New("checkpoint in use")
	// ErrUnknownOutcome: a conditional write's outcome could not be determined.
	ErrUnknownOutcome = errors.New("outcome unknown")
	// ErrInvalidURL is wrapped by every error about a malformed store URL,
	// from ParseURL and from every opener, on every scheme (the CLI's usage
	// error, exit 2).
	ErrInvalidURL = errors.New("invalid store URL")
)

// kinds are the error kinds with their stable names (see KindName), the
// outcomes of a whole step first: an ErrFenced or ErrUnknownOutcome may wrap
// the store error that led to it, and names the error.
var kinds = []struct {
	err  error
	name string
}{
	{ErrUnknownOutcome, "unknown_outcome"},
	{ErrFenced, "fenced"},
	{ErrInUse, "in_use"},
	{ErrDenied, "denied"},
	{ErrNotFound, "not_found"},
	{ErrExists, "exists"},
	{ErrPrecondition, "precondition"},
	{ErrPermission, "permission"},
	{ErrUnavailable, "unavailable"},
	{ErrUnsupported, "unsupported"},
	{ErrInvalidKey, "invalid_key"},
	{ErrTooLarge, "too_large"},
	{ErrInvalidURL, "invalid_url"},
}

// Error is the error every Store returns for a key: the operation, the key,
// the kind (one of the Err* sentinels) and the backend's cause.
type Error struct {
	Op   string // "get", "stat", "list", "put", "delete", ...
	Key  string
	Kind error // one of the Err* sentinels
	Err  error // the backend's error, may be nil
}

func (e *Error) Error() string {
	msg := e.Op + " " + strconv.Quote(e.Key) + ": " + e.Kind.Error()
	if e.Err != nil && e.Err.Error() != e.Kind.Error() {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap exposes both the kind (for errors.Is) and the cause (for errors.As).
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// E builds an *Error. If cause already is an *Error for the same key it is
// returned unchanged, so errors are wrapped once.
func E(op, key string, kind, cause error) error {
	var ge *Error
	if errors.As(cause, &ge) && ge.Key == key && ge.Kind == kind {
		return cause
	}
	return &Error{Op: op, Key: key, Kind: kind, Err: cause}
}

// KindOf returns the sentinel kind of err, or nil when err has none.
func KindOf(err error) error {
	if err == nil {
		return nil
	}
	var ge *Error
	if errors.As(err, &ge) {
		return ge.Kind
	}
	for _, k := range kindOrder {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

// kindOrder is the order KindOf tries the kinds of an error that is no
// *Error: the store kinds first. A URL error has no kind for KindOf (only
// a name).
var kindOrder = []error{
	ErrNotFound, ErrExists, ErrPrecondition, ErrPermission, ErrUnavailable,
	ErrUnsupported, ErrInvalidKey, ErrTooLarge, ErrDenied, ErrFenced, ErrInUse, ErrUnknownOutcome,
}

// KindName returns the stable name of err's kind, as reports, metric
// labels and drills spell it: "not_found", "exists", "precondition",
// "permission", "unavailable", "unsupported", "invalid_key", "too_large",
// "invalid_url", "denied", "fenced", "in_use" or "unknown_outcome"; "" when
// err is nil or has no kind. An outcome of a whole step (unknown outcome,
// fenced, in use, denied) names the error even when it wraps the store
// error that led to it.
func KindName(err error) string {
	if err == nil {
		return ""
	}
	for _, k := range kinds[:4] {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	kind := KindOf(err)
	for _, k := range kinds {
		if k.err == kind || kind == nil && errors.Is(err, k.err) {
			return k.name
		}
	}
	return ""
}
