package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/demo"
	"github.com/ckgate/ckgate/gateway"
)

// TestRunWaiterTakesOverOnRelease: a second `ckgate run` on a checkpoint
// whose writer is alive waits, saying for whom (host:pid, query, epoch)
// and until when; when that writer ends cleanly (SIGTERM: it releases the
// checkpoint) the second takes over at once, long before the 30 s lease
// would have run out. It used to sleep out the whole lease.
func TestRunWaiterTakesOverOnRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the CLI")
	}
	dir := t.TempDir()
	src, err := os.ReadFile("../../testdata/specs/clickstream-sessions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(sp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "demo", "clickstream")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range demo.Files(demo.Default()) {
		if err := os.WriteFile(filepath.Join(in, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		break // one file is input enough
	}
	ck := filepath.Join(dir, "ck")

	// The owner: an interval trigger keeps it running after its batch.
	owner := startChild(t, dir, nil, "run", "--checkpoint", ck, "--format", "json", sp)
	t.Cleanup(func() { owner.kill() })
	select {
	case <-owner.progress:
	case <-owner.exited:
		t.Fatalf("the owner ended before its first batch:\n%s", owner.output())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the owner made no progress:\n%s", owner.output())
	}

	waiter := startChild(t, dir, nil, "run", "--checkpoint", ck, "--available-now", "--format", "json", sp)
	t.Cleanup(func() { waiter.kill() })
	select {
	case <-waiter.waiting:
	case <-waiter.exited:
		t.Fatalf("the second run did not wait for the live owner (exit %d):\n%s", waiter.code(), waiter.output())
	case <-time.After(time.Minute):
		t.Fatalf("the second run does not say it waits:\n%s", waiter.output())
	}
	out := waiter.output()
	pid := strconv.Itoa(owner.cmd.Process.Pid)
	for _, want := range []string{":" + pid + " ", "query ", "epoch 1", "lease expires at "} {
		if !strings.Contains(out, want) {
			t.Errorf("the wait message lacks %q (whom it waits for, until when):\n%s", want, out)
		}
	}
	m := regexp.MustCompile(`lease expires at (\S+?),`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no lease expiry in the wait message:\n%s", out)
	}
	until, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		t.Fatal(err)
	}

	if err := owner.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	owner.wait(t, time.Minute)
	// Well inside the owner's 30 s lease: the waiter must not sleep it out.
	waiter.wait(t, 20*time.Second)
	if waiter.code() != 0 {
		t.Fatalf("the second run: exit %d\n%s", waiter.code(), waiter.output())
	}
	data, err := os.ReadFile(filepath.Join(ck, filepath.FromSlash(gateway.WriterKey)))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := gateway.ParseWriterRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Epoch != 2 || rec.PID != waiter.cmd.Process.Pid {
		t.Fatalf("writer record after the take-over: %+v, want epoch 2 of pid %d", rec, waiter.cmd.Process.Pid)
	}
	if !rec.Since.Before(until) {
		t.Fatalf("the second run took over at %s, not before the released lease's expiry %s", rec.Since, until)
	}
}
