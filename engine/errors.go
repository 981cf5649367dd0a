package engine

import "errors"

var (
	// ErrIncompatible: the checkpoint was written by another plan, source
	// or sink than the spec describes.
	ErrIncompatible = errors.New("incompatible with the checkpoint")
	// ErrCorrupt: the checkpoint's log is not what the engine wrote (a gap,
	// a commit without offsets, an unreadable entry).
	ErrCorrupt = errors.New("checkpoint log inconsistent")
)
