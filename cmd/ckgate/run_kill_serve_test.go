package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/internal/emulator"
)

// Helpers of the SIGKILL matrix's serve cells: ckgate's own engine writing
// its checkpoint and its sink through `ckgate serve` (s3:// with the
// endpoint of the front door), signing as the job principal of serveCreds.

// serveJobEnv is the environment of a process signing as serveCreds' job
// principal (ORDERSJOB), without any other AWS configuration; it is set in
// the test's own environment too, for the reads that check the results.
func serveJobEnv(t *testing.T) []string {
	t.Helper()
	none := filepath.Join(t.TempDir(), "none")
	env := []string{"AWS_ACCESS_KEY_ID=ORDERSJOB", "AWS_SECRET_ACCESS_KEY=orders-s3cr3t-value-0123456789",
		"AWS_SESSION_TOKEN=", "AWS_PROFILE=", "AWS_CONFIG_FILE=" + none, "AWS_SHARED_CREDENTIALS_FILE=" + none,
		"AWS_EC2_METADATA_DISABLED=true"}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return env
}

// serveRoot is a killCell's root in bucket ckpt behind the front door at
// endpoint.
func serveRoot(endpoint string) func(run int, what string) string {
	q := url.Values{"endpoint": {endpoint}, "path_style": {"true"}, "region": {"us-east-1"}}.Encode()
	return func(run int, what string) string { return fmt.Sprintf("s3://ckpt/run-%d/%s?%s", run, what, q) }
}

// storeUnavailable is the serve-killed cell's transient failure: the run
// failed because the front door was gone (its requests refused or cut:
// unavailable, or a write whose outcome it could not read back).
func storeUnavailable(c *child) bool {
	out := c.output()
	return c.code() == ExitFailure && (strings.Contains(out, ": unavailable") || strings.Contains(out, ": outcome unknown"))
}

// serveProcess is `ckgate serve` over a local store holding bucket ckpt,
// run as a child process so that a test can SIGKILL it and start it again
// on the same address.
type serveProcess struct {
	t                *testing.T
	store, creds     string
	addr             string
	c                *child
	starts, killings int
	unavailable      int // engine runs that failed because it was gone
}

func startServeProcess(t *testing.T, credsYAML string) *serveProcess {
	t.Helper()
	s := &serveProcess{t: t, store: t.TempDir(), creds: filepath.Join(t.TempDir(), "creds.yaml")}
	if err := os.MkdirAll(filepath.Join(s.store, "ckpt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.store, "ckpt", "README"), []byte("bucket\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.creds, []byte(credsYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := emulator.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s.addr = fmt.Sprintf("127.0.0.1:%d", port)
	s.start()
	t.Cleanup(func() {
		if s.c != nil {
			s.c.kill()
		}
	})
	return s
}

func (s *serveProcess) endpoint() string { return "http://" + s.addr }

// start starts the server and waits until it listens.
func (s *serveProcess) start() {
	s.t.Helper()
	const ready = "listening on"
	c := startChildWatching(s.t, s.store, nil, []string{ready}, "serve", "--listen", s.addr, "--store", s.store, "--credentials", s.creds)
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	select {
	case <-c.seen(ready):
	case <-c.exited:
		s.t.Fatalf("ckgate serve exited %d before listening:\n%s", c.code(), c.output())
	case <-timer.C:
		c.kill()
		s.t.Fatalf("ckgate serve did not listen within a minute:\n%s", c.output())
	}
	s.c = c
	s.starts++
}

// strike is the serve-killed cell's kill point: SIGKILL the server; then,
// turn about (the first time the second way), start it again at once (the
// engine's requests in flight fail, its next ones reach the new server)
// or only once the engine (c) has seen it gone and exited.
func (s *serveProcess) strike(c *child) {
	s.t.Helper()
	if !s.c.kill() {
		s.t.Fatalf("ckgate serve had exited before it was killed (%d):\n%s", s.c.code(), s.c.output())
	}
	s.killings++
	if s.killings%2 == 1 {
		c.wait(s.t, 2*time.Minute)
	}
	s.start()
}

// transient is storeUnavailable, counting the runs it matched.
func (s *serveProcess) transient(c *child) bool {
	if !storeUnavailable(c) {
		return false
	}
	s.unavailable++
	return true
}

// proved fails the test unless an engine run saw the front door gone.
func (s *serveProcess) proved() {
	s.t.Helper()
	s.t.Logf("ckgate serve SIGKILLed %d times, %d engine runs failed on it and were restarted", s.killings, s.unavailable)
	if s.unavailable == 0 {
		s.t.Fatal("no engine run failed because ckgate serve was gone: the cell proves nothing")
	}
}
