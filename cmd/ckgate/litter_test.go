package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ckgate/ckgate/lifecycle"
)

// treeOutside lists every path under root (directories with a trailing
// "/") except _ckgate and what is below it.
func treeOutside(t *testing.T, root string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
			return nil
		case rel == "_ckgate":
			return filepath.SkipDir
		case d.IsDir():
			rel += "/"
		}
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// TestSparkCheckpointGainsNothingOutsideCkgate: reading, inspecting,
// validating and pruning a Spark checkpoint leaves nothing of ckgate's
// beside Spark's files (retention apply used to leave nine
// .ckgate-locks/NNN files in it); only what the plan removes goes.
func TestSparkCheckpointGainsNothingOutsideCkgate(t *testing.T) {
	dir := copyTree(t, "checkpoint-version-4.0.0/hdfs/agg")
	before := treeOutside(t, dir)
	same := func(step string, want []string) {
		t.Helper()
		if got := treeOutside(t, dir); !slices.Equal(got, want) {
			var added, gone []string
			for _, p := range got {
				if !slices.Contains(want, p) {
					added = append(added, p)
				}
			}
			for _, p := range want {
				if !slices.Contains(got, p) {
					gone = append(gone, p)
				}
			}
			t.Fatalf("after %s the checkpoint changed outside _ckgate/: added %v, removed %v", step, added, gone)
		}
	}
	ckgate(t, Options{}, "", "inspect", dir).want(t, 0)
	same("inspect", before)
	ckgate(t, Options{}, "", "audit", dir)
	same("audit", before)
	ckgate(t, Options{}, "", "gap", dir).want(t, 0)
	same("gap", before)
	ckgate(t, Options{}, "", "compat", "--spec", "../../testdata/specs/clickstream-sessions.yaml", dir)
	same("compat", before)
	ckgate(t, Options{}, "", "validate-access", dir).want(t, 0)
	same("validate-access", before)

	r := ckgate(t, Options{}, "", "retention", "plan", "--min-batches", "2", "--format", "json", dir)
	r.want(t, 0)
	same("retention plan", before)
	var plan lifecycle.RetentionResult
	if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil || len(plan.Remove) == 0 {
		t.Fatalf("plan: %v, %d removals\n%s", err, len(plan.Remove), r.stdout)
	}
	ckgate(t, Options{}, "", "retention", "apply", "--min-batches", "2", dir).want(t, 0, "deleted")
	want := slices.DeleteFunc(slices.Clone(before), func(p string) bool {
		return slices.ContainsFunc(plan.Remove, func(d lifecycle.Decision) bool { return d.Key == p })
	})
	same("retention apply", want)
}

// chownTree gives root and everything below it to uid:gid.
func chownTree(t *testing.T, root string, uid, gid int) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ownedBy lists the paths under root (root itself included) owned by uid.
func ownedBy(t *testing.T, root string, uid uint32) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if fi.Sys().(*syscall.Stat_t).Uid == uid {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// asNobody returns a directory that the user nobody can reach and a
// command that runs this test binary as the CLI with nobody's uid and gid.
// It skips unless the test runs as root.
func asNobody(t *testing.T) (dir string, cli func(args ...string) *exec.Cmd) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("switching to another uid needs root")
	}
	dir = t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ckgate.test")
	copyExecutable(t, self, bin)
	old := selfExecutable
	selfExecutable = func() (string, error) { return bin, nil }
	t.Cleanup(func() { selfExecutable = old })
	return dir, func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), childEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return cmd
	}
}

// TestValidateAccessAsRootLeavesNoTrap: validate-access run as root on a
// directory of the job user leaves nothing owned by root and nothing
// outside _ckgate/ (it used to leave root-owned _ckgate/preflight and
// .ckgate-locks, after which the job user's own probe and store put
// failed with EACCES), says that the job is probably not root, and the
// job user then writes there.
func TestValidateAccessAsRootLeavesNoTrap(t *testing.T) {
	dir, asNobody := asNobody(t)
	root := filepath.Join(dir, "ckpt")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	chownTree(t, root, 65534, 65534)

	ckgate(t, Options{}, "", "validate-access", root).want(t, 0, "Warning: ", "--as-user")
	r := ckgate(t, Options{}, "", "validate-access", "--format", "json", root)
	r.want(t, 0)
	rep := validateJSON(t, r.stdout)
	if len(rep.Warnings) == 0 || !strings.Contains(strings.Join(rep.Warnings, "\n"), "--as-user") {
		t.Errorf("JSON warnings %q, want one pointing at --as-user", rep.Warnings)
	}
	if got := ownedBy(t, root, 0); len(got) > 0 {
		t.Fatalf("validate-access as root left paths owned by root: %v", got)
	}
	if got := treeOutside(t, root); len(got) > 0 {
		t.Fatalf("validate-access left paths outside _ckgate/: %v", got)
	}
	if _, err := os.Lstat(filepath.Join(root, "_ckgate", "preflight")); !os.IsNotExist(err) {
		t.Fatalf("validate-access left its probe directory _ckgate/preflight: %v", err)
	}

	// The job user's own probe, and its writes, work afterwards.
	if out, err := asNobody("validate-access", root).CombinedOutput(); err != nil {
		t.Fatalf("validate-access as the job user after one as root: %v\n%s", err, out)
	}
	in := filepath.Join(dir, "in")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"_ckgate/note", "data/x"} {
		if out, err := asNobody("store", "put", "--overwrite", in, root, key).CombinedOutput(); err != nil {
			t.Fatalf("store put %s as the job user after validate-access as root: %v\n%s", key, err, out)
		}
	}
}

// TestStorePutAsRootKeepsTheOwner: what a write as root creates in the
// job user's directory (the key's directories, the key, the lock files)
// belongs to the owner of the root directory, so the job can go on
// writing there.
func TestStorePutAsRootKeepsTheOwner(t *testing.T) {
	dir, asNobody := asNobody(t)
	root := filepath.Join(dir, "ckpt")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	chownTree(t, root, 65534, 65534)
	in := filepath.Join(dir, "in")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "store", "put", "--overwrite", in, root, "data/a/b").want(t, 0)
	ckgate(t, Options{}, "", "store", "put", in, root, "data/c").want(t, 0)
	if got := ownedBy(t, root, 0); len(got) > 0 {
		t.Fatalf("store put as root left paths owned by root in a directory of uid 65534: %v", got)
	}
	if got := treeOutside(t, root); !slices.Equal(got, []string{"data/", "data/a/", "data/a/b", "data/c"}) {
		t.Fatalf("store put left %v outside _ckgate/, want only the keys", got)
	}
	for _, key := range []string{"data/a/b", "data/a/d"} {
		if out, err := asNobody("store", "put", "--overwrite", in, root, key).CombinedOutput(); err != nil {
			t.Fatalf("store put %s as the job user after a put as root: %v\n%s", key, err, out)
		}
	}
}

// TestRetentionApplyAsRootKeepsTheOwner: pruning a job user's Spark
// checkpoint as root leaves nothing owned by root in it (the lock files
// its deletes take used to be root's), and the job user's own probe passes
// there after.
func TestRetentionApplyAsRootKeepsTheOwner(t *testing.T) {
	_, asNobody := asNobody(t)
	dir := copyTree(t, "checkpoint-version-4.0.0/hdfs/agg")
	for d := filepath.Dir(dir); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	chownTree(t, dir, 65534, 65534)
	ckgate(t, Options{}, "", "retention", "apply", "--min-batches", "2", dir).want(t, 0, "deleted")
	if got := ownedBy(t, dir, 0); len(got) > 0 {
		t.Fatalf("retention apply as root left paths owned by root in the job's checkpoint: %v", got)
	}
	// The job user's probe writes, compare-and-swaps (taking the lock files
	// retention made) and deletes there.
	if out, err := asNobody("validate-access", dir).CombinedOutput(); err != nil {
		t.Fatalf("validate-access as the job user after retention apply as root: %v\n%s", err, out)
	}
}
