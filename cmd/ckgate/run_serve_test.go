package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunThroughServeRefusesAnotherJob: ckgate's engine writing its
// checkpoint through `ckgate serve`; the first job's access key owns the
// root, and a second job's run on the same root is refused by the front
// door's guard. `ckgate run` reports that refusal as it reports its own
// guard's: exit 4 naming the rule and the owner, with nothing written.
func TestRunThroughServeRefusesAnotherJob(t *testing.T) {
	creds := serveCreds + `  - access_key: OTHERJOB
    secret_key: other-s3cr3t-value-0123456789
    principal: other-job
    kind: job
`
	ep, store, _ := startServeAs(t, creds)
	serveJobEnv(t)
	ck := serveRoot(ep)(0, "ck")
	dir, sp := demoDir(t)
	runCLI(t, dir, "run", "--checkpoint", ck, "--available-now", "--format", "json", sp).want(t, 0)
	owner, err := os.ReadFile(filepath.Join(store, "ckpt", "run-0", "ck", "_ckgate", "root-owner"))
	if err != nil || !strings.Contains(string(owner), `"orders-job"`) {
		t.Fatalf("root owner record %q (%v): want the job principal orders-job", owner, err)
	}
	writer := filepath.Join(store, "ckpt", "run-0", "ck", "_ckgate", "writer")
	before, err := os.ReadFile(writer)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "OTHERJOB")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "other-s3cr3t-value-0123456789")
	r := runCLI(t, dir, "run", "--checkpoint", ck, "--available-now", "--format", "json", sp)
	r.wantErr(t, ExitDenied, "AccessDenied", "CKG-P014", "owned by orders-job")
	if strings.Contains(r.stderr, "s3cr3t") {
		t.Fatalf("a secret reached stderr:\n%s", r.stderr)
	}
	if after, err := os.ReadFile(writer); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the refused run changed the writer record (%v):\n%s\nthen\n%s", err, before, after)
	}
}
