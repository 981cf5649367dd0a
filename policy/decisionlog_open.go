package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
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
	if fi, err := os.Stat(name); err == nil && !fi.Mode().IsRegular() {
		return nil, nil, notRegular(name, fi.Mode())
	}
	// O_NONBLOCK: a FIFO put there since the Stat must not block the open.
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("decision log %s: %w", name, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(name, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	l := NewDecisionLog(f)
	l.sync = f.Sync
	return l, f.Close, nil
}

func notRegular(name string, m fs.FileMode) error {
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("decision log %s: %w (it is %s)", name, ErrDecisionLogFile, what)
}
