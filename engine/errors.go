package engine

import (
	"errors"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

var (
	// ErrIncompatible: the checkpoint was written by another plan, source
	// or sink than the spec describes.
	ErrIncompatible = errors.New("incompatible with the checkpoint")
	// ErrCorrupt: the checkpoint's log is not what the engine wrote (a gap,
	// a commit without offsets, an unreadable entry). It is the one
	// checkpoint.ErrCorrupt, the value engine/state returns too, so one
	// errors.Is answers for a log, a codec and a state file.
	ErrCorrupt = checkpoint.ErrCorrupt
)
