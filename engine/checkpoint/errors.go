package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ckgate/ckgate/engine/checkpoint/errkind"
)

// Error kinds of this package. Check them with errors.Is; every error a
// function of this package returns for a stored object names its key.
var (
	// ErrNotCheckpoint: the location holds nothing that looks like a
	// checkpoint (no metadata, offsets, commits, state or _ckgate files).
	ErrNotCheckpoint = errors.New("not a checkpoint")
	// ErrCorrupt: the bytes do not follow the format (bad JSON, bad framing,
	// a checksum that does not match, a negative length, ...). It is the
	// one value engine.ErrCorrupt and engine/state's ErrCorrupt are too
	// (errkind.Corrupt).
	ErrCorrupt = errkind.Corrupt
	// ErrTruncated: the bytes end before the format says they may. It is
	// also ErrCorrupt.
	ErrTruncated error = &kindError{msg: "truncated", parent: ErrCorrupt}
	// ErrUnsupportedVersion: a log or file version newer than the highest
	// this package understands (see *VersionError).
	ErrUnsupportedVersion = errors.New("unsupported version")
	// ErrUnsupportedCodec: a state store compression codec this package
	// cannot decode (only lz4, Spark's default, is decoded).
	ErrUnsupportedCodec = errors.New("unsupported compression codec")
)

type kindError struct {
	msg    string
	parent error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.parent }

// VersionError reports a version header this package does not understand.
// It matches ErrUnsupportedVersion with errors.Is.
type VersionError struct {
	What  string // "offset log", "commit log", "state schema", ...
	Found int    // the version in the file
	Max   int    // the highest version understood
	Exact bool   // the format demands an exact version (none here yet)
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%s version v%d is not supported (highest understood: v%d)", e.What, e.Found, e.Max)
}

// Is makes errors.Is(err, ErrUnsupportedVersion) hold.
func (e *VersionError) Is(target error) bool { return target == ErrUnsupportedVersion }

// corruptf returns an ErrCorrupt error with a formatted reason.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// truncatedf returns an ErrTruncated error with a formatted reason.
func truncatedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrTruncated, fmt.Sprintf(format, args...))
}

// KeyError is an error about one stored object: every decoding error the
// Read* helpers return is one, so a caller can tell which file is at fault
// with errors.As.
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *KeyError) Unwrap() error { return e.Err }

// keyErr names the key an error is about.
func keyErr(key string, err error) error {
	if err == nil {
		return nil
	}
	return &KeyError{Key: key, Err: err}
}

// jsonErr classifies a JSON decoding error of what: input that ends inside
// a value (a file cut short) is ErrTruncated, anything else ErrCorrupt.
func jsonErr(what string, err error) error {
	var se *json.SyntaxError
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &se) && se.Error() == "unexpected end of JSON input" {
		return truncatedf("%s: %v", what, err)
	}
	return corruptf("%s: %v", what, err)
}
