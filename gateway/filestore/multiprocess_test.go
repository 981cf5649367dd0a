package filestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
)

// The multi-process race re-executes this test binary; these variables
// select the child role and its parameters.
const (
	childRootEnv = "CKGATE_FILESTORE_RACE_ROOT"
	childIDEnv   = "CKGATE_FILESTORE_RACE_ID"
	childIncsEnv = "CKGATE_FILESTORE_RACE_INCS"
)

// createRounds is how many keys the processes race to create, one after
// the other.
const createRounds = 10

func TestMain(m *testing.M) {
	if root := os.Getenv(childRootEnv); root != "" {
		os.Exit(raceChild(root))
	}
	if root := os.Getenv(killChildEnv); root != "" {
		os.Exit(killChild(root))
	}
	os.Exit(m.Run())
}

// raceChild is one racing process: it waits until its stdin closes, races
// a create-only write of "winner", then does its CAS increments of
// "counter", and reports on stdout.
func raceChild(root string) int {
	id := os.Getenv(childIDEnv)
	incs, err := strconv.Atoi(os.Getenv(childIncsEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad increment count:", err)
		return 2
	}
	s, err := filestore.New(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer s.Close()
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil { // the start signal
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	for r := range createRounds {
		key := fmt.Sprintf("winner/%d", r)
		switch _, err := s.Put(ctx, key, []byte(id), gateway.IfAbsent()); {
		case err == nil:
			fmt.Println("create", r, "won")
		case errors.Is(err, gateway.ErrExists):
			fmt.Println("create", r, "exists")
		default:
			fmt.Fprintln(os.Stderr, "create:", err)
			return 1
		}
	}
	retries := 0
	for done := 0; done < incs; {
		b, v, err := s.Get(ctx, "counter")
		if err != nil {
			fmt.Fprintln(os.Stderr, "get:", err)
			return 1
		}
		n, err := strconv.Atoi(string(b))
		if err != nil {
			fmt.Fprintln(os.Stderr, "counter:", err)
			return 1
		}
		switch _, err := s.Put(ctx, "counter", []byte(strconv.Itoa(n+1)), gateway.IfMatch(v)); {
		case err == nil:
			done++
		case errors.Is(err, gateway.ErrPrecondition):
			retries++
		default:
			fmt.Fprintln(os.Stderr, "CAS:", err)
			return 1
		}
	}
	fmt.Println("increments", incs, "retries", retries)
	return 0
}

// TestMultiProcessRace: 8 OS processes race a create-only write of one key
// (exactly one wins) and CAS-increment one counter (no update is lost).
func TestMultiProcessRace(t *testing.T) {
	const procs, incs = 8, 25
	dir := t.TempDir()
	s, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(t.Context(), "counter", []byte("0"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}

	type child struct {
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		stdout bytes.Buffer
		stderr bytes.Buffer
	}
	children := make([]*child, procs)
	for i := range children {
		c := &child{cmd: exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")}
		c.cmd.Env = append(os.Environ(), childRootEnv+"="+dir, childIDEnv+"="+strconv.Itoa(i), childIncsEnv+"="+strconv.Itoa(incs))
		c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
		if c.stdin, err = c.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children[i] = c
	}
	for _, c := range children { // start them all at once
		c.stdin.Close()
	}

	winners := make([][]int, createRounds) // round -> winning children
	for i, c := range children {
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("child %d: %v\nstderr:\n%s", i, err, c.stderr.String())
			continue
		}
		lines := strings.Split(strings.TrimSpace(c.stdout.String()), "\n")
		if len(lines) != createRounds+1 || !strings.HasPrefix(lines[createRounds], fmt.Sprintf("increments %d ", incs)) {
			t.Errorf("child %d reported %q", i, lines)
			continue
		}
		for r, line := range lines[:createRounds] {
			switch line {
			case fmt.Sprintf("create %d won", r):
				winners[r] = append(winners[r], i)
			case fmt.Sprintf("create %d exists", r):
			default:
				t.Errorf("child %d: round %d: %q", i, r, line)
			}
		}
		t.Logf("child %d: %s", i, lines[createRounds])
	}
	for r, w := range winners {
		if len(w) != 1 {
			t.Errorf("round %d: processes %v won the create-only race, want exactly one", r, w)
			continue
		}
		key := fmt.Sprintf("winner/%d", r)
		if b, _, err := s.Get(t.Context(), key); err != nil || string(b) != strconv.Itoa(w[0]) {
			t.Errorf("%s holds %q, %v; process %d won", key, b, err, w[0])
		}
	}
	b, _, err := s.Get(t.Context(), "counter")
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(procs * incs); string(b) != want {
		t.Errorf("counter = %s after %d processes did %d increments each, want %s (lost updates)", b, procs, incs, want)
	}
}
