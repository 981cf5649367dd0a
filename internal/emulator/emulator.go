// Package emulator starts the real storage emulators the tests run against
// (versitygw for S3, fake-gcs-server for GCS, Azurite for Azure Blob) on free
// loopback ports with their own temporary data directories, and stops them.
//
// Binaries are looked up in the repository's .tools folder (filled by
// scripts/install-tools.sh, which `make test` runs) and then on PATH. When
// one is missing, Require skips the test with install instructions, or fails
// it when the CI environment variable is set: CI never passes on a skipped
// backend.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ErrMissing reports an emulator binary that is not installed.
var ErrMissing = errors.New("emulator not installed")

// Require fails (CI set) or skips the test when err is not nil. Use it with
// the error a Start function returned.
func Require(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("emulator required in CI: %v", err)
	}
	t.Skipf("emulator unavailable (set CI=1 to make this a failure): %v", err)
}

// RepoRoot returns the directory holding go.mod, searching up from the
// working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Find returns the path of an emulator binary: .tools/<rel> under the
// repository root, then PATH.
func Find(name, rel string) (string, error) {
	if root, err := RepoRoot(); err == nil {
		p := filepath.Join(root, ".tools", rel)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: %s not found in .tools/%s or on PATH; run scripts/install-tools.sh (make tools)", ErrMissing, name, rel)
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Process is a running emulator.
type Process struct {
	Name    string
	Addr    string // host:port on loopback
	Dir     string // its private data directory
	cmd     *exec.Cmd
	logs    *lockedBuilder
	stopped sync.Once
}

type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 1<<20 {
		l.b.Write(p)
	}
	return len(p), nil
}

// Start runs bin with args and env (added to the environment), then waits
// until ready succeeds (default: a TCP connect to addr) or the timeout ends.
func Start(ctx context.Context, name, bin string, args, env []string, addr, dir string, ready func(context.Context) error) (*Process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	// A crashed test binary must not leave its emulator running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	w := &lockedBuilder{b: &strings.Builder{}}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, Addr: addr, Dir: dir, cmd: cmd, logs: w}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if ready == nil {
		ready = func(ctx context.Context) error {
			c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			if err == nil {
				c.Close()
			}
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := ready(ctx); err == nil {
			return p, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("%s exited before it was ready: %v\n%s", name, err, w.String())
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("%s not ready on %s after 60s\n%s", name, addr, w.String())
		case <-tick.C:
		}
	}
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Stop kills the emulator.
func (p *Process) Stop() {
	p.stopped.Do(func() {
		_ = p.cmd.Process.Kill()
	})
}

// Logs returns what the emulator printed so far (capped at 1 MiB).
func (p *Process) Logs() string { return p.logs.String() }
