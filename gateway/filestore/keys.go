package filestore

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// reservedPrefix starts the names of the store's own files (temp files and
// the lock directory); key segments may not start with it.
const reservedPrefix = ".ckgate-"

// ckgateDir is the directory of ckgate's own keys (gateway.WriterKey's).
const ckgateDir = "_ckgate"

const (
	tempPrefix = reservedPrefix + "tmp-"
	// lockDir holds the lock files, under ckgateDir so that a checkpoint
	// ckgate only reads or prunes gains nothing beside its own files.
	lockDir = ckgateDir + "/" + reservedPrefix + "locks"
	// legacyLockDir is where ckgate kept its lock files before: when a root
	// has it, a lock is taken there too (see Store.lock).
	legacyLockDir = reservedPrefix + "locks"
)

// validKey checks key for op: gateway.ValidateKey plus the reserved names.
func validKey(op, key string) error {
	if err := gateway.ValidateKey(op, key); err != nil {
		return err
	}
	if reserved(key) {
		return gateway.E(op, key, gateway.ErrInvalidKey, errReserved)
	}
	return nil
}

var errReserved = errors.New("a key segment starting with " + reservedPrefix + " is reserved for the store's temp and lock files")

// reserved reports whether a segment of the '/'-separated name starts with
// reservedPrefix.
func reserved(name string) bool {
	for seg := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(seg, reservedPrefix) {
			return true
		}
	}
	return false
}

// keyPath maps a key to its path relative to the root, or reports why the
// key is refused. The path is always local (filepath.IsLocal): it never
// escapes the root lexically; symbolic links are checked by os.Root.
func keyPath(op, key string) (string, error) {
	if err := validKey(op, key); err != nil {
		return "", err
	}
	return filepath.FromSlash(key), nil
}

// splitKey returns the directory of a key's path ("." at the top) and its
// base name.
func splitKey(p string) (dir, base string) {
	return filepath.Dir(p), filepath.Base(p)
}
