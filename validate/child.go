package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// childRequest is what the parent sends the --as-user child on stdin.
type childRequest struct {
	URL             string        `json:"url"`
	ExpectPrincipal string        `json:"expect_principal,omitempty"`
	Timeout         time.Duration `json:"timeout"`
	MaxSkew         time.Duration `json:"max_skew"`
}

// childWait is how long the parent waits for an interrupted child to
// remove its probe keys and report before killing it.
const childWait = cleanupTimeout + 5*time.Second

// runAsUser runs the probes of a local-disk store in a child process
// (opts.Child) with the uid and gid of opts.AsUser and returns the
// child's report. On cancellation the child gets SIGTERM, removes its
// probe keys and still reports.
func runAsUser(ctx context.Context, u *url.URL, opts Options) (*Report, error) {
	if u.Scheme != "file" {
		return nil, usagef("--as-user applies to local-disk stores only, not %s://", u.Scheme)
	}
	spec, err := ParseUserSpec(opts.AsUser)
	if err != nil {
		return nil, usagef("%w", err)
	}
	acct, err := spec.Resolve()
	if err != nil {
		return nil, usagef("%w", err)
	}
	if len(opts.Child) == 0 {
		return nil, errors.New("--as-user: no child command to run the probes with")
	}
	req, err := json.Marshal(childRequest{URL: u.String(), ExpectPrincipal: opts.ExpectPrincipal,
		Timeout: opts.timeout(), MaxSkew: opts.maxSkew()})
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, opts.Child[0], opts.Child[1:]...)
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &limited{w: &stderr, n: 64 << 10}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: acct.UID, Gid: acct.GID, Groups: acct.Groups},
		// A parent that dies still lets the child clean up.
		Pdeathsig: syscall.SIGTERM,
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = childWait
	who := fmt.Sprintf("uid %d gid %d", acct.UID, acct.GID)
	runErr := cmd.Run()
	if stdout.Len() == 0 {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		switch {
		case errors.As(runErr, &ee) && ee.ExitCode() == 2:
			return nil, usagef("%s", strings.TrimPrefix(msg, "ckgate: "))
		case runErr != nil && msg == "":
			return nil, fmt.Errorf("--as-user %s: run %s as %s: %w (the program must be readable and executable by that user)",
				acct.Spec, opts.Child[0], who, runErr)
		case runErr != nil:
			return nil, fmt.Errorf("--as-user %s: the probes as %s failed: %s", acct.Spec, who, msg)
		}
		return nil, fmt.Errorf("--as-user %s: the child process reported nothing", acct.Spec)
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return nil, fmt.Errorf("--as-user %s: the child's report: %w", acct.Spec, err)
	}
	for i := range rep.Results {
		if rep.Results[i].Layer == LayerCredentials {
			rep.Results[i].Message = fmt.Sprintf("--as-user %s: a child process with %s: %s", acct.Spec, who, rep.Results[i].Message)
		}
	}
	if err := ctx.Err(); err != nil {
		return &rep, fmt.Errorf("validate-access %s: %s: %w", rep.URL, stopReason(err), err)
	}
	return &rep, nil
}

// ServeChild is the child side of --as-user: it reads the request from r,
// runs the probes as the current process and writes the report as JSON
// to w. It returns an error (and writes nothing) only for a request it
// cannot run; an interrupted run is still reported.
func ServeChild(ctx context.Context, r io.Reader, w io.Writer) error {
	var req childRequest
	if err := json.NewDecoder(r).Decode(&req); err != nil {
		return usagef("child request: %w", err)
	}
	if !strings.HasPrefix(req.URL, "file://") {
		return usagef("child request: not a file:// URL")
	}
	rep, err := Run(ctx, req.URL, Options{ExpectPrincipal: req.ExpectPrincipal, Timeout: req.Timeout, MaxSkew: req.MaxSkew})
	if rep == nil {
		return err
	}
	return json.NewEncoder(w).Encode(rep)
}

// limited keeps the first n bytes written to it.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}
