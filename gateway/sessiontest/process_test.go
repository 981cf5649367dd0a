package sessiontest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/sessiontest"
)

// The child role: open a session on CKGATE_SESSION_CHILD_ROOT when the first
// line arrives on stdin and print "opened"; run CKGATE_BATCHES batches (0 =
// until killed) when the next line (or EOF) arrives, printing "batch N"
// after each. Exit 3 when the checkpoint is in use, 4 when fenced.
func TestMain(m *testing.M) {
	if root := os.Getenv("CKGATE_SESSION_CHILD_ROOT"); root != "" {
		os.Exit(child(root))
	}
	os.Exit(m.Run())
}

func child(root string) int {
	in := bufio.NewReader(os.Stdin)
	in.ReadString('\n') // the start signal
	ctx := context.Background()
	st, err := filestore.New(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	o := gateway.SessionOptions{QueryID: "proc-query"}
	sess, err := gateway.OpenSession(ctx, st, o)
	if errors.Is(err, gateway.ErrInUse) {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer sess.Close(ctx)
	fmt.Println("opened")
	in.ReadString('\n') // the go signal
	limit, _ := strconv.Atoi(os.Getenv("CKGATE_BATCHES"))
	for done := 0; limit == 0 || done < limit; done++ {
		n, err := nextBatch(ctx, st)
		if err == nil {
			err = sessiontest.Batch(ctx, sess, n)
		}
		if errors.Is(err, gateway.ErrFenced) {
			return 4
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("batch %d\n", n)
	}
	return 0
}

// nextBatch is Spark's restart rule: the batch after the latest commit (an
// in-flight offsets entry is re-run with the same number).
func nextBatch(ctx context.Context, st gateway.Store) (int, error) {
	next := 0
	for a, err := range st.List(ctx, "commits/") {
		if err != nil {
			return 0, err
		}
		n, err := strconv.Atoi(strings.TrimPrefix(a.Key, "commits/"))
		if err == nil && n+1 > next {
			next = n + 1
		}
	}
	return next, nil
}

type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

func startChild(t *testing.T, root string, batches int) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CKGATE_SESSION_CHILD_ROOT="+root, "CKGATE_BATCHES="+strconv.Itoa(batches))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &proc{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
}

func exitCode(t *testing.T, p *proc) int {
	t.Helper()
	for p.out.Scan() {
	}
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// Two OS processes start on one root at once: exactly one proceeds.
func TestTwoProcessesOneWriter(t *testing.T) {
	for round := range 3 {
		root := t.TempDir()
		procs := []*proc{startChild(t, root, 20), startChild(t, root, 20)}
		for _, p := range procs {
			io.WriteString(p.stdin, "start\n") // both open at once
		}
		// The winner holds its session (it waits for "go"), so the loser
		// always meets a live owner.
		var winners, losers []*proc
		for _, p := range procs {
			if p.out.Scan() && p.out.Text() == "opened" {
				winners = append(winners, p)
			} else if exitCode(t, p) == 3 {
				losers = append(losers, p)
			}
		}
		if len(winners) != 1 || len(losers) != 1 {
			t.Fatalf("round %d: %d opened, %d refused; want exactly one of each", round, len(winners), len(losers))
		}
		winners[0].stdin.Close()
		if code := exitCode(t, winners[0]); code != 0 {
			t.Fatalf("round %d: the writer exited %d", round, code)
		}
		sessiontest.WantLog(t, mustStore(t, root), 20)
	}
}

// A killed writer is taken over at once by the next process on the same
// host, which resumes from the log without a gap or a double entry.
func TestKilledWriterTakenOverAtOnce(t *testing.T) {
	root := t.TempDir()
	a := startChild(t, root, 0)
	a.stdin.Close()
	for seen := 0; seen < 5 && a.out.Scan(); {
		if strings.HasPrefix(a.out.Text(), "batch ") {
			seen++
		}
	}
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	killed, err := os.ReadFile(root + "/" + gateway.WriterKey)
	if err != nil {
		t.Fatal(err)
	}
	dead, err := gateway.ParseWriterRecord(killed)
	if err != nil {
		t.Fatal(err)
	}
	b := startChild(t, root, 3)
	b.stdin.Close()
	if code := exitCode(t, b); code != 0 {
		t.Fatalf("restart after a kill exited %d, want 0", code)
	}
	n, err := nextBatch(context.Background(), mustStore(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if n < 8 {
		t.Fatalf("after 5+ batches and 3 more, the next batch is %d", n)
	}
	sessiontest.WantLog(t, mustStore(t, root), n)
	data, err := os.ReadFile(root + "/" + gateway.WriterKey)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := gateway.ParseWriterRecord(data)
	if err != nil || rec.Epoch != 2 || !rec.Released {
		t.Fatalf("writer record %+v, %v: want epoch 2, released", rec, err)
	}
	// The dead writer's lease (30 s) had not run out: the take-over did not wait for it.
	if !rec.Since.Before(dead.Heartbeat.Add(dead.Lease())) {
		t.Fatalf("took over at %s, after the dead writer's lease ended (%s)", rec.Since, dead.Heartbeat.Add(dead.Lease()))
	}
}

func mustStore(t testing.TB, root string) gateway.Store {
	st, err := filestore.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
