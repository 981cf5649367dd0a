package main

import (
	"errors"
	"strings"

	"github.com/aws/smithy-go"

	"github.com/ckgate/ckgate/gateway"
)

// frontDoorDenied reports whether err carries a policy refusal of a ckgate
// front door (`ckgate serve`) that a command reached its store through: an
// S3 403 AccessDenied whose message is the gateway's policy error ("…:
// denied by policy: rule CKG-…"). The command's own guard allowed the
// write and the front door's, deciding for the principal of the access
// key, refused it: for the user it is the same refusal as the command's
// own guard's (exit 4), not a broken credential. The store driver reports
// it as ErrPermission, with the SDK's error kept; any other AccessDenied
// stays a failure.
func frontDoorDenied(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "AccessDenied" {
		return false
	}
	return strings.Contains(api.ErrorMessage(), gateway.ErrDenied.Error()+": rule ")
}
