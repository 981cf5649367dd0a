package testproc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// The user nobody can run the copy of the test binary, from the
// directory; a copy of another program runs as that program.
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
	CopyExecutable(t, "/bin/false", dir+"/false")
	if err := exec.Command(dir + "/false").Run(); err == nil {
		t.Fatal("the copy of false succeeded")
	}
}
