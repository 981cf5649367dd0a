//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ckgate/ckgate/engine/demo"
	"github.com/ckgate/ckgate/internal/hostiletest"
)

// childResult is what a CLI child process did.
type childResult struct {
	result
	maxRSSKiB int64 // peak resident set size (getrusage ru_maxrss, KiB on Linux)
}

// runChild runs the CLI (this test binary in CLI mode) in dir as a child
// process and waits for it, at most hostiletest.Watchdog: a child still
// running then is killed and the test fails (it blocked).
func runChild(t testing.TB, dir string, args ...string) childResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostiletest.Watchdog)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("ckgate %s: still running after %s (blocked), killed\nstderr:\n%s", strings.Join(args, " "), hostiletest.Watchdog, errOut.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("ckgate %s: %v", strings.Join(args, " "), err)
	}
	r := childResult{result: result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errOut.String()}}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSSKiB = int64(ru.Maxrss)
	}
	return r
}

// hostileDemo returns a new directory holding the demo clickstream, its
// spec (clickstream-sessions.yaml) and demo/checkpoint, the checkpoint of
// one complete run of it (in a child process).
func hostileDemo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := demo.Write(filepath.Join(dir, "demo", "clickstream"), demo.Default()); err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile("../../testdata/specs/clickstream-sessions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, hostileSpec), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runChild(t, dir, "run", "--checkpoint", "demo/checkpoint", "--available-now", hostileSpec); r.code != 0 {
		t.Fatalf("demo run: exit %d\n%s", r.code, r.stderr)
	}
	return dir
}

const hostileSpec = "clickstream-sessions.yaml"
