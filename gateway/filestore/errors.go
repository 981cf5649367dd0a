package filestore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ckgate/ckgate/gateway"
)

// escapeErr holds os.Root's (unexported) "path escapes from parent" error,
// learnt from the first root opened: an absolute name is refused with it
// before any system call.
var (
	escapeOnce sync.Once
	escapeErr  atomic.Pointer[error]
)

func learnEscapeError(r *os.Root) {
	escapeOnce.Do(func() {
		_, err := r.Lstat("/")
		var pe *fs.PathError
		if errors.As(err, &pe) {
			escapeErr.Store(&pe.Err)
		}
	})
}

// isEscape reports whether err says a name leads out of the root.
func isEscape(err error) bool {
	if e := escapeErr.Load(); e != nil && errors.Is(err, *e) {
		return true
	}
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes from parent")
}

// kindOf maps a file system error to a gateway error kind (see the package
// documentation, # Errors).
func kindOf(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return gateway.ErrUnavailable
	case isEscape(err), errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.ENAMETOOLONG):
		return gateway.ErrInvalidKey
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		// EACCES and EPERM: a permission problem is never "not found".
		return gateway.ErrPermission
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		return gateway.ErrNotFound
	case errors.Is(err, fs.ErrExist):
		return gateway.ErrExists
	}
	// ENOSPC, EDQUOT, EIO, a closed root, ...: see # Errors.
	return gateway.ErrUnavailable
}

// writeKindOf is kindOf for the steps of a write: a key that is a directory
// or lies below an object cannot be stored on a file system.
func writeKindOf(err error) error {
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) {
		return gateway.ErrUnsupported
	}
	return kindOf(err)
}

// errUnderObject is the cause reported when a write's key lies under an
// existing object.
var errUnderObject = errors.New("a file system cannot store a key below another object's key, or over a directory")
