package policy_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/policy"
)

// A decision log that is not a regular file is refused at open, naming it,
// without blocking on a FIFO that has no reader.
func TestOpenDecisionLogRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	linkNull := filepath.Join(dir, "to-null")
	linkFIFO := filepath.Join(dir, "to-fifo")
	if os.Symlink("/dev/null", linkNull) != nil || os.Symlink(fifo, linkFIFO) != nil {
		t.Fatal("symlink")
	}
	for _, name := range []string{"/dev/null", dir, fifo, sock, linkNull, linkFIFO} {
		done := make(chan error, 1)
		go func() {
			l, closeLog, err := policy.OpenDecisionLog(name, &bytes.Buffer{})
			if err == nil {
				closeLog()
				if l == nil {
					err = errors.New("nil log")
				}
			}
			done <- err
		}()
		timer := time.NewTimer(5 * time.Second)
		select {
		case err := <-done:
			if !errors.Is(err, policy.ErrDecisionLogFile) || !strings.Contains(err.Error(), name) {
				t.Errorf("%s: got %v, want ErrDecisionLogFile naming it", name, err)
			}
		case <-timer.C:
			t.Fatalf("%s: open blocked", name)
		}
		timer.Stop()
	}
}

// A regular file is created (0600) or appended to, one JSON line a record.
func TestOpenDecisionLogAppends(t *testing.T) {
	name := filepath.Join(t.TempDir(), "d.jsonl")
	if err := os.WriteFile(name, []byte("{\"earlier\":true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, closeLog, err := policy.OpenDecisionLog(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := l.Record(policy.DecisionRecord{Action: "delete", Result: "allow", BreakGlass: true, Reason: "INC-7"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := closeLog(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 || lines[0] != `{"earlier":true}` || !strings.Contains(lines[2], `"break_glass":true`) {
		t.Fatalf("decision log:\n%s", data)
	}
	fresh := filepath.Join(t.TempDir(), "new.jsonl")
	_, closeLog, err = policy.OpenDecisionLog(fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	closeLog()
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("created %v: %v", fi.Mode(), err)
	}
}

// "-" (the console) records decisions but not a break glass: the
// authorizer refuses a break glass it cannot record.
func TestConsoleDecisionLogRefusesBreakGlass(t *testing.T) {
	var console bytes.Buffer
	l, _, err := policy.OpenDecisionLog("-", &console)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(policy.DecisionRecord{Action: "put", Result: "allow"}); err != nil || !strings.Contains(console.String(), `"action":"put"`) {
		t.Fatalf("console record: %v %q", err, console.String())
	}
	e := engine(t, policy.Options{})
	admin := policy.Principal{ID: "alice", Kind: policy.KindAdmin, Reason: "INC-42"}
	raw := seeded(t)
	a := policy.NewAuthorizer(e, admin, root, policy.Facts{QueryID: "q1"}, l)
	err = gateway.WithAuthorizer(raw, a).Delete(context.Background(), "offsets/0", gateway.None())
	wantRule(t, err, policy.RuleFailClosed)
	if _, _, err := raw.Get(context.Background(), "offsets/0"); err != nil {
		t.Fatalf("offsets/0 was deleted: %v", err)
	}
}
