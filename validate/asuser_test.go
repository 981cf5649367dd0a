package validate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ckgate/ckgate/internal/testproc"
	"github.com/ckgate/ckgate/validate"
)

const nobody = 65534

// asUserSetup returns the command line of a child that the user nobody may
// run (a copy of this test binary in a directory it can reach) and a
// directory for stores that nobody can reach too. It skips unless the
// test runs as root, which switching users needs.
func asUserSetup(t *testing.T) (child []string, dir string) {
	t.Helper()
	dir, bin := testproc.SelfForOtherUser(t, "validate.test")
	t.Setenv(childEnv, "1")
	return []string{bin}, dir
}

// nobodysDir makes dir/ckpt, owned by nobody: a checkpoint root the job
// user may write.
func nobodysDir(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Join(dir, "ckpt")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(root, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestAsUserCannotWrite: a root-owned directory that nobody may read but
// not write: the kernel refuses the write (EACCES) although the caller is
// root, and the report says so at the authorization layer.
func TestAsUserCannotWrite(t *testing.T) {
	child, dir := asUserSetup(t)
	root := filepath.Join(dir, "ckpt")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "metadata"), []byte(`{"id":"q"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"nobody", "65534", "65534:65534"} {
		t.Run(spec, func(t *testing.T) {
			rep := run(t, root, validate.Options{AsUser: spec, Child: child})
			if rep.OK {
				t.Fatalf("ok for a user who cannot write:\n%s", dump(rep))
			}
			layersBefore(t, rep)
			if res := want(t, rep, validate.LayerCredentials, validate.OpResolve, validate.Pass); !strings.Contains(res.Message, "--as-user "+spec) {
				t.Errorf("credentials %q do not name --as-user", res.Message)
			}
			if !strings.HasPrefix(rep.Principal, "uid=65534(") {
				t.Errorf("principal %q, want uid 65534", rep.Principal)
			}
			wantReadOnly(t, rep, "EACCES")
			want(t, rep, validate.LayerAuthorization, validate.OpDelete, validate.Skip)
		})
	}
	// As root, the same directory passes: the refusal was the kernel's.
	if rep := run(t, root, validate.Options{}); !rep.OK {
		t.Fatalf("root fails:\n%s", dump(rep))
	}
}

// TestAsUserCanWrite: a directory nobody owns passes as nobody, the
// principal is nobody's, and --expect-principal checks it.
func TestAsUserCanWrite(t *testing.T) {
	child, dir := asUserSetup(t)
	root := nobodysDir(t, dir)
	rep := run(t, root, validate.Options{AsUser: "nobody", Child: child, ExpectPrincipal: "nobody"})
	if !rep.OK {
		t.Fatalf("not ok:\n%s", dump(rep))
	}
	if !strings.HasPrefix(rep.Principal, "uid=65534(") {
		t.Errorf("principal %q, want uid 65534", rep.Principal)
	}
	noProbeKeys(t, admin(t, root))

	rep = run(t, root, validate.Options{AsUser: "nobody", Child: child, ExpectPrincipal: "root"})
	want(t, rep, validate.LayerIdentity, validate.OpWhoAmI, validate.Fail)
	want(t, rep, validate.LayerAuthorization, validate.OpPut, validate.Skip)
}

// TestAsUserUsage: --as-user is for local disks, with a valid spec.
func TestAsUserUsage(t *testing.T) {
	for _, tc := range []struct{ url, spec string }{
		{"s3://bucket/ck?region=us-east-1", "nobody"},
		{t.TempDir(), "no such user"},
		{t.TempDir(), "ckgate-no-such-user"},
		{t.TempDir(), "4294967295"},
	} {
		_, err := validate.Run(context.Background(), tc.url, validate.Options{AsUser: tc.spec, Child: []string{"/bin/false"}})
		if !errors.Is(err, validate.ErrUsage) {
			t.Errorf("--as-user %q on %s: %v, want ErrUsage", tc.spec, tc.url, err)
		}
	}
}

// TestRootLeavesNoRootOwnedPaths: a run as root on a directory the job's
// user owns creates its directories and lock files as that user and
// removes the probe directory it made, so the job (and a later run as
// that user) can still write; the report warns that the job is probably
// not root.
func TestRootLeavesNoRootOwnedPaths(t *testing.T) {
	child, dir := asUserSetup(t)
	root := nobodysDir(t, dir)
	rep := run(t, root, validate.Options{})
	if !rep.OK {
		t.Fatalf("root fails:\n%s", dump(rep))
	}
	if res := want(t, rep, validate.LayerCleanup, validate.OpRemove, validate.Pass); !strings.Contains(res.Message, "_ckgate/preflight") {
		t.Errorf("cleanup %q does not say it removed its probe directory", res.Message)
	}
	if _, err := os.Lstat(filepath.Join(root, "_ckgate", "preflight")); !os.IsNotExist(err) {
		t.Errorf("the probe directory is left: %v", err)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "--as-user") {
		t.Errorf("warnings %q, want one pointing at --as-user", rep.Warnings)
	}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobody {
			t.Errorf("%s belongs to uid %d after the run as root", p, st.Uid)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep := run(t, root, validate.Options{AsUser: "nobody", Child: child}); !rep.OK {
		t.Fatalf("nobody fails after root's run:\n%s", dump(rep))
	}
}

// TestAsUserChildNotRunnable: a program the user may not run is an error
// that says so, not a report.
func TestAsUserChildNotRunnable(t *testing.T) {
	_, dir := asUserSetup(t)
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil { // root's alone
		t.Fatal(err)
	}
	bin := filepath.Join(private, "ckgate")
	testproc.CopyExecutable(t, "/bin/true", bin)
	rep, err := validate.Run(context.Background(), dir, validate.Options{AsUser: "nobody", Child: []string{bin}})
	if err == nil || errors.Is(err, validate.ErrUsage) || rep != nil {
		t.Fatalf("Run = %v, %v; want an error", rep, err)
	}
	if !strings.Contains(err.Error(), "executable by that user") {
		t.Errorf("error %q does not say why", err)
	}
}
