package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/aws/smithy-go"
	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
)

func TestExitCode(t *testing.T) {
	var syntaxErr *json.SyntaxError
	if err := json.Unmarshal([]byte("{"), new(any)); !errors.As(err, &syntaxErr) {
		t.Fatalf("no syntax error from json: %v", err)
	}
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal([]byte(`"x"`), new(int)); !errors.As(err, &typeErr) {
		t.Fatalf("no type error from json: %v", err)
	}
	put := func(kind error) error { return gateway.E("put", "commits/0", kind, nil) }
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"plain failure", errors.New("boom"), 1},
		{"unavailable", put(gateway.ErrUnavailable), 1},
		{"permission", put(gateway.ErrPermission), 1},
		{"unsupported", put(gateway.ErrUnsupported), 1},
		{"unknown outcome", put(gateway.ErrUnknownOutcome), 1},
		{"deadline", context.DeadlineExceeded, 1},
		{"findings", &FindingsError{Count: 2, What: "probes failed"}, 1},
		{"wrapped findings", fmt.Errorf("report: %w", &FindingsError{Count: 1, What: "x"}), 1},
		{"usage", &UsageError{Err: errors.New("want URL")}, 2},
		{"wrapped usage", fmt.Errorf("x: %w", &UsageError{Err: errors.New("bad flag")}), 2},
		{"input", &InputError{Err: fs.ErrNotExist}, 2},
		{"invalid key", put(gateway.ErrInvalidKey), 2},
		{"not found", gateway.E("get", "offsets/9", gateway.ErrNotFound, nil), 2},
		{"json syntax", fmt.Errorf("spec: %w", syntaxErr), 2},
		{"json type", typeErr, 2},
		{"urfave help topic", cli.Exit("No help topic for 'x'", 3), 2},
		{"exists", put(gateway.ErrExists), 3},
		{"precondition", put(gateway.ErrPrecondition), 3},
		{"in use", fmt.Errorf("open session: %w", gateway.ErrInUse), 3},
		{"fenced", gateway.E("put", "offsets/3", gateway.ErrFenced, nil), 3},
		{"denied", gateway.E("delete", "offsets/0", gateway.ErrDenied, errors.New("rule")), 4},
		{"denied beats conflict", fmt.Errorf("%w: %w", gateway.ErrDenied, gateway.ErrExists), 4},
		{"front door's policy refusal", gateway.E("put", "_ckgate/writer", gateway.ErrPermission, &smithy.GenericAPIError{Code: "AccessDenied",
			Message: `put "ckpt/q/_ckgate/writer": denied by policy: rule CKG-P014 (root-owner): its checkpoint is owned by orders-job`}), 4},
		{"other AccessDenied", gateway.E("put", "commits/0", gateway.ErrPermission, &smithy.GenericAPIError{Code: "AccessDenied",
			Message: "Access Denied"}), 1},
		{"policy words in another code", gateway.E("put", "commits/0", gateway.ErrPermission, &smithy.GenericAPIError{Code: "SignatureDoesNotMatch",
			Message: "denied by policy: rule CKG-P014"}), 1},
		{"cancelled", context.Canceled, 130},
		{"cancelled store request", gateway.E("get", "k", gateway.ErrUnavailable, context.Canceled), 130},
		{"interrupted wrapper", &interruptedError{err: errors.New("sdk: request aborted")}, 130},
		{"interrupt beats conflict", fmt.Errorf("%w: %w", context.Canceled, gateway.ErrExists), 130},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.err); got != tt.want {
				t.Fatalf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}
