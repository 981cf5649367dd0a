package filestore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
)

// killChildEnv selects the child role of TestCreateKilledMidWriteLeavesNothing:
// the root it writes in.
const killChildEnv = "CKGATE_FILESTORE_KILL_ROOT"

// stalled yields some bytes, says so on stdout, then blocks until stdin
// closes (it never does: the parent kills the process).
type stalled struct{ said bool }

func (r *stalled) Read(p []byte) (int, error) {
	if !r.said {
		r.said = true
		return copy(p, strings.Repeat("x", 4096)), nil
	}
	fmt.Println("writing")
	_, err := io.Copy(io.Discard, os.Stdin)
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return 0, err
}

// killChild starts a create-only write of offsets/7 whose body stalls.
func killChild(root string) int {
	s, err := filestore.New(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, err = s.PutStream(context.Background(), "offsets/7", &stalled{}, gateway.IfAbsent())
	fmt.Fprintln(os.Stderr, "write ended:", err)
	return 1
}

// TestCreateKilledMidWriteLeavesNothing: a process killed (SIGKILL) in the
// middle of a create-only write leaves nothing in the key's directory, not
// even a temp file: the temp has no name until it is published.
func TestCreateKilledMidWriteLeavesNothing(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "offsets"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+root)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "writing\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q (%v), stderr %s", line, err, stderr.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	ents, err := os.ReadDir(filepath.Join(root, "offsets"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 0 {
		t.Fatalf("the killed create-only write left %q in offsets/", names)
	}
	s, err := filestore.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(context.Background(), "offsets/7"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("get offsets/7 after the kill: %v, want not found", err)
	}
	if _, err := s.Put(context.Background(), "offsets/7", []byte("v1\n"), gateway.IfAbsent()); err != nil {
		t.Fatalf("create offsets/7 after the kill: %v", err)
	}
}
