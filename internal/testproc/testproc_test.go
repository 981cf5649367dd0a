package testproc

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

func TestCopyExecutable(t *testing.T) {
	dir := t.TempDir()
	to := filepath.Join(dir, "true")
	CopyExecutable(t, "/bin/true", to)
	if err := exec.Command(to).Run(); err != nil {
		t.Fatalf("the copy does not run: %v", err)
	}
	want, _ := os.ReadFile("/bin/true")
	if got, err := os.ReadFile(to); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("copy differs: %v", err)
	}
}

// The user nobody can run the copy of the test binary from the directory.
func TestSelfForOtherUser(t *testing.T) {
	if os.Getenv("TESTPROC_CHILD") == "1" {
		return
	}
	dir, bin := SelfForOtherUser(t, "testproc.test")
	cmd := exec.Command(bin, "-test.run", "^TestSelfForOtherUser$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TESTPROC_CHILD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}
