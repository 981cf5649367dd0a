package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
)

// Exit statuses. ExitCode is the only place that chooses one.
const (
	ExitOK          = 0
	ExitFailure     = 1 // findings, or a failure
	ExitUsage       = 2 // usage error or unreadable input
	ExitConflict    = 3 // exists, stale version, in use, fenced
	ExitDenied      = 4 // denied by policy
	ExitInterrupted = 130
)

// UsageError is a command line the command cannot run: a wrong number of
// arguments, an unknown flag, command or flag value.
type UsageError struct {
	Command string // "ckgate store put", for the help pointer
	Err     error
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(c *cli.Context, format string, args ...any) error {
	return &UsageError{Command: helpName(c), Err: fmt.Errorf(format, args...)}
}

// InputError is input named on the command line that cannot be read or
// parsed: a local file, a store URL.
type InputError struct {
	Err error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// FindingsError reports that a command ran and found problems (a report
// with failures); the findings themselves were already printed.
type FindingsError struct {
	Count int
	What  string // "access probes failed"
}

func (e *FindingsError) Error() string { return strconv.Itoa(e.Count) + " " + e.What }

// interruptedError marks an error that happened because the context was
// cancelled by a signal, whatever the error says.
type interruptedError struct{ err error }

func (e *interruptedError) Error() string   { return "interrupted: " + e.err.Error() }
func (e *interruptedError) Unwrap() []error { return []error{context.Canceled, e.err} }

// ExitCode maps err to the process exit status, checking in order:
//
//	nil                                               0
//	context.Canceled (a signal arrived)               130
//	gateway.ErrDenied, a front door's policy refusal  4
//	ErrInUse, ErrFenced, ErrExists, ErrPrecondition   3
//	UsageError, flag-parse and help-topic errors,
//	InputError, ErrInvalidKey, ErrNotFound,
//	JSON syntax and type errors                       2
//	FindingsError, anything else                      1
//
// ErrNotFound is 2 because every key a command reads or removes is named by
// the user: a missing one is unreadable input, not a store failure.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var (
		usage    *UsageError
		input    *InputError
		exit     cli.ExitCoder
		syntax   *json.SyntaxError
		typ      *json.UnmarshalTypeError
		findings *FindingsError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, gateway.ErrDenied), frontDoorDenied(err):
		return ExitDenied
	case errors.Is(err, gateway.ErrInUse), errors.Is(err, gateway.ErrFenced),
		errors.Is(err, gateway.ErrExists), errors.Is(err, gateway.ErrPrecondition):
		return ExitConflict
	case errors.As(err, &usage), errors.As(err, &input),
		errors.Is(err, gateway.ErrInvalidKey), errors.Is(err, gateway.ErrNotFound),
		errors.As(err, &syntax), errors.As(err, &typ):
		return ExitUsage
	case errors.As(err, &exit):
		// urfave/cli's own errors ("No help topic for 'x'") are about the
		// command line; our commands never return cli.Exit.
		return ExitUsage
	case errors.As(err, &findings):
		return ExitFailure
	}
	return ExitFailure
}
