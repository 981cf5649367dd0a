package gateway

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key accepted (S3's limit, in bytes).
const MaxKeyLen = 1024

// ErrKeyTooLong is the cause of the ErrInvalidKey a key longer than
// MaxKeyLen gets (S3's KeyTooLongError).
var ErrKeyTooLong = errors.New("key longer than 1024 bytes")

// ValidateKey reports whether key is a valid object key: non-empty, valid
// UTF-8, at most MaxKeyLen bytes, relative, '/'-separated with no empty, "."
// or ".." segment, no trailing '/', no NUL and no backslash.
func ValidateKey(op, key string) error {
	if len(key) > MaxKeyLen {
		return E(op, key, ErrInvalidKey, ErrKeyTooLong)
	}
	if reason := keyProblem(key, false); reason != "" {
		return E(op, key, ErrInvalidKey, errors.New(reason))
	}
	return nil
}

// ValidatePrefix is ValidateKey for List prefixes: empty is allowed, and so
// is a trailing '/'.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if reason := keyProblem(prefix, true); reason != "" {
		return E("list", prefix, ErrInvalidKey, errors.New(reason))
	}
	return nil
}

func keyProblem(key string, isPrefix bool) string {
	switch {
	case key == "":
		return "empty key"
	case len(key) > MaxKeyLen:
		return "key longer than 1024 bytes"
	case !utf8.ValidString(key):
		return "key is not valid UTF-8"
	case strings.ContainsRune(key, 0):
		return "key contains NUL"
	case strings.ContainsRune(key, '\\'):
		return "key contains a backslash"
	case strings.HasPrefix(key, "/"):
		return "key is absolute"
	}
	segs := strings.Split(key, "/")
	for i, s := range segs {
		last := i == len(segs)-1
		switch {
		case last && isPrefix:
			// the last segment of a prefix is a partial name: anything goes
		case s == "" && last:
			return "key ends with '/'"
		case s == "":
			return "key has an empty segment"
		case s == "." || s == "..":
			return "key has a '.' or '..' segment"
		}
	}
	return ""
}
