package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/internal/emulator"
)

// The store commands on every URL kind, against the real emulators: the
// same script of commands and exit statuses for file, s3, gs and az.

func TestStoreCommandsFile(t *testing.T) {
	root := filepath.Join(t.TempDir(), "bucket")
	storeScript(t, root, root+"/team/q1")
}

func TestStoreCommandsS3(t *testing.T) {
	emu := emulator.Versitygw(t)
	q := s3Query(emu, emu.Endpoint).Encode()
	b := bucketName()
	storeScript(t, "s3://"+b+"?"+q, "s3://"+b+"/team/q1?"+q)
}

func TestStoreCommandsGCS(t *testing.T) {
	emu := emulator.FakeGCS(t)
	t.Setenv("STORAGE_EMULATOR_HOST", emu.Host)
	b := bucketName()
	storeScript(t, "gs://"+b+"?project=ckgate-test", "gs://"+b+"/team/q1")
}

func TestStoreCommandsAzure(t *testing.T) {
	account, q := azurite(t)
	c := bucketName()
	storeScript(t, "az://"+account+"/"+c+"?"+q, "az://"+account+"/"+c+"/team/q1?"+q)
}

// storeScript makes the bucket at bucketURL and drives a checkpoint under
// ckptURL (the same bucket with the prefix team/q1) through every store
// command.
func storeScript(t *testing.T, bucketURL, ckptURL string) {
	t.Helper()
	o := Options{}
	ckgate(t, o, "", "store", "mb", bucketURL).want(t, 0, "ready")
	// Again, through the prefix: the bucket exists, which is fine (and a
	// local root directory needs its own mb).
	ckgate(t, o, "", "store", "mb", ckptURL).want(t, 0, "ready")

	meta := `{"id":"9538ada3-a233-4697-8b02-cc66250189a3"}`
	ckgate(t, o, meta, "store", "put", "-", ckptURL, "metadata").want(t, 0, `put "metadata"`)
	// only the owning query's writer session creates log entries; an
	// admin breaks glass with a reason the decision log records
	ckgate(t, o, "v1\n{}", "store", "put", "-", ckptURL, "commits/0").wantErr(t, 4, "CKG-P006")
	glass := []string{"--reason", "repair after INC-7", "--decision-log", filepath.Join(t.TempDir(), "decisions.jsonl")}
	ckgate(t, o, "v1\n{}", append(append([]string{"store", "put"}, glass...), "-", ckptURL, "commits/0")...).want(t, 0)
	ckgate(t, o, "v1\n{\"nextBatchWatermarkMs\":7}", append(append([]string{"store", "put"}, glass...), "-", ckptURL, "commits/0")...).
		wantErr(t, 3, `"commits/0"`, "already exists")
	if r := ckgate(t, o, "", "store", "cat", ckptURL, "commits/0"); r.code != 0 || r.stdout != "v1\n{}" {
		t.Fatalf("cat after a refused put: exit %d, %q", r.code, r.stdout)
	}
	// replacing or removing a log entry of a checkpoint is refused by the
	// policy, but for an admin breaking glass
	ckgate(t, o, "v1\n{\"nextBatchWatermarkMs\":7}", "store", "put", "--overwrite", "-", ckptURL, "commits/0").wantErr(t, 4, "CKG-P003", "--reason TEXT --decision-log FILE")
	ckgate(t, o, "v1\n{\"nextBatchWatermarkMs\":7}", append(append([]string{"store", "put", "--overwrite"}, glass...), "-", ckptURL, "commits/0")...).want(t, 0)
	ckgate(t, o, "", "store", "cat", ckptURL, "metadata").want(t, 0, meta)

	r := ckgate(t, o, "", "store", "ls", "-r", "--format", "json", ckptURL)
	r.want(t, 0)
	var entries []lsEntry
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		t.Fatalf("ls json: %v\n%s", err, r.stdout)
	}
	if len(entries) != 2 || entries[0].Key != "commits/0" || entries[0].Size != int64(len("v1\n{\"nextBatchWatermarkMs\":7}")) ||
		entries[0].Version == "" || entries[1].Key != "metadata" {
		t.Fatalf("ls -r %s = %+v", ckptURL, entries)
	}
	// The bucket root shows the checkpoint's prefix as one folded directory.
	ckgate(t, o, "", "store", "ls", bucketURL).want(t, 0, "team/", "(2 objects)")

	ckgate(t, o, "", "store", "rm", ckptURL, "commits/0").wantErr(t, 4, "CKG-P004")
	ckgate(t, o, "", append(append([]string{"store", "rm"}, glass...), ckptURL, "commits/0")...).want(t, 0, `removed "commits/0"`)
	ckgate(t, o, "", append(append([]string{"store", "rm"}, glass...), ckptURL, "commits/0")...).wantErr(t, 2, `"commits/0"`, "not found")
	ckgate(t, o, "", "store", "cat", ckptURL, "commits/0").wantErr(t, 2, `"commits/0"`)
	if r := ckgate(t, o, "", "store", "ls", "-r", ckptURL); strings.Contains(r.stdout, "commits/0") || !strings.Contains(r.stdout, "metadata") {
		t.Fatalf("ls after rm:\n%s", r.stdout)
	}
}
