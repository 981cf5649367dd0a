package policy

import (
	"errors"
	"fmt"
	"io"

	"github.com/ckgate/ckgate/gateway"
)

// ErrDecisionLogFile: a decision log that is not a regular file (a device
// such as /dev/null, a FIFO, a socket, a directory, or a symlink to one).
var ErrDecisionLogFile = errors.New("a decision log must be a regular file")

// errConsoleBreakGlass: a break glass recorded only on the console.
var errConsoleBreakGlass = errors.New("a break glass needs a decision log file (--decision-log FILE), not the console")

// OpenDecisionLog opens the decision log named name: "" is no log (nil),
// "-" the console (written to console; it records decisions but cannot
// record a break glass, whose Record is refused), anything else a regular
// file, created if absent (mode 0600), appended to and fsynced after each
// record. A name that is anything but a regular file is refused, naming
// it, before anything is written. The close function is never nil on
// success.
func OpenDecisionLog(name string, console io.Writer) (*DecisionLog, func() error, error) {
	switch name {
	case "":
		return nil, func() error { return nil }, nil
	case "-":
		l := NewDecisionLog(console)
		l.console = true
		return l, func() error { return nil }, nil
	}
	f, err := gateway.AppendRegularFile(name)
	var nr *gateway.NotRegularFileError
	if errors.As(err, &nr) {
		return nil, nil, fmt.Errorf("decision log %s: %w (it is %s)", name, ErrDecisionLogFile, gateway.FileType(nr.Mode))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("decision log %s: %w", name, err)
	}
	l := NewDecisionLog(f)
	l.sync = f.Sync
	return l, f.Close, nil
}
