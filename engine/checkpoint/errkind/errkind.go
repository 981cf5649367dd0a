// Package errkind holds the error kinds that engine/checkpoint and the
// engine's own state codec (engine/state) share without importing each
// other: checkpoint.ErrCorrupt, engine.ErrCorrupt and state.ErrCorrupt are
// all Corrupt, so one errors.Is answers whichever layer found the damage.
package errkind

import "errors"

// Corrupt: the bytes do not follow the format.
var Corrupt = errors.New("corrupt")
