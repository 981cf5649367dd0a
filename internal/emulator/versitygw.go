package emulator

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// S3Emulator is a running S3-compatible server (versitygw) with the root
// credentials it accepts. Clients must use path-style addressing.
type S3Emulator struct {
	Endpoint  string // "http://127.0.0.1:PORT"
	AccessKey string
	SecretKey string
	Region    string
	// Sidecar reports whether object metadata lives in a sidecar directory
	// (the data directory has no user xattrs) rather than in xattrs.
	Sidecar bool

	proc *Process
	dir  string
}

// SetEnv gives the test process (and the children it starts) only the
// emulator's credentials: no profile, credentials file or instance role.
func (e *S3Emulator) SetEnv(t testing.TB) {
	t.Setenv("AWS_ACCESS_KEY_ID", e.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", e.SecretKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// Stop kills the server and removes its data directory.
func (e *S3Emulator) Stop() {
	if e == nil || e.proc == nil {
		return
	}
	e.proc.Stop()
	_ = os.RemoveAll(e.dir)
}

// Logs returns what the server printed so far.
func (e *S3Emulator) Logs() string {
	if e == nil || e.proc == nil {
		return ""
	}
	return e.proc.Logs()
}

// StartVersitygw starts versitygw's posix backend on a free loopback port
// with a fresh data directory and random root credentials. Object metadata
// goes into user xattrs when the temporary file system supports them and
// into a sidecar directory otherwise. It returns an error wrapping
// ErrMissing when the binary is not installed.
func StartVersitygw(ctx context.Context) (*S3Emulator, error) {
	return startVersitygw(ctx, "ckgate-versitygw-", nil)
}

// startVersitygw starts versitygw's posix backend in a new temp directory
// named with pattern. setup, when given, prepares more of that directory
// and returns gateway options to put before the "posix" subcommand.
func startVersitygw(ctx context.Context, pattern string, setup func(dir string) ([]string, error)) (*S3Emulator, error) {
	bin, err := Find("versitygw", "bin/versitygw")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("versitygw: free port: %w", err)
	}
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return nil, fmt.Errorf("versitygw: %w", err)
	}
	fail := func(err error) (*S3Emulator, error) {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("versitygw: %w", err)
	}
	data := filepath.Join(dir, "data")
	sidecar := filepath.Join(dir, "meta")
	for _, d := range []string{data, sidecar} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fail(err)
		}
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := []string{"--port", addr, "--quiet"}
	if setup != nil {
		extra, err := setup(dir)
		if err != nil {
			return fail(err)
		}
		args = append(args, extra...)
	}
	useSidecar := !userXattrs(data)
	args = append(args, "posix")
	if useSidecar {
		args = append(args, "--sidecar", sidecar)
	}
	args = append(args, data)
	e := &S3Emulator{
		Endpoint:  "http://" + addr,
		AccessKey: "CKGATE" + rand.Text()[:14],
		SecretKey: rand.Text() + rand.Text()[:14],
		Region:    "us-east-1",
		Sidecar:   useSidecar,
		dir:       dir,
	}
	env := []string{
		"ROOT_ACCESS_KEY=" + e.AccessKey,
		"ROOT_SECRET_KEY=" + e.SecretKey,
		"VGW_REGION=" + e.Region,
	}
	ready := func(ctx context.Context) error {
		// Any HTTP answer (an anonymous request is refused with 403) means
		// the S3 API is serving.
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.Endpoint+"/", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	p, err := Start(ctx, "versitygw", bin, args, env, addr, dir, ready)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	e.proc = p
	return e, nil
}

// userXattrs reports whether dir's file system accepts user extended
// attributes, which versitygw's posix backend needs without --sidecar.
func userXattrs(dir string) bool {
	f, err := os.CreateTemp(dir, ".xattr-probe-")
	if err != nil {
		return false
	}
	name := f.Name()
	_ = f.Close()
	defer os.Remove(name)
	return unix.Setxattr(name, "user.ckgate.probe", []byte("1"), 0) == nil
}
