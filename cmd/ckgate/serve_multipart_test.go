package main

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeRandom(t *testing.T, path string, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// noMultipartLeft fails when the front door left parts of an upload in
// the store.
func noMultipartLeft(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(filepath.Join(dir, "ckpt", "_ckgate", "multipart"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("multipart part left in the store: %s", p)
		}
		return nil
	})
}

// TestServeAWSCLIMultipart: `aws s3 cp` of a 20 MiB file uploads it in
// parts (the CLI switches to multipart above 8 MiB); the object stored is
// the file, and the CLI reads it back.
func TestServeAWSCLIMultipart(t *testing.T) {
	aws := requireTool(t, "aws")
	ep, dir, _ := startServe(t)
	work := t.TempDir()
	src := filepath.Join(work, "big.zip")
	data := writeRandom(t, src, 20<<20)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(aws, append([]string{"--endpoint-url", ep}, args...)...)
		cmd.Env = clientEnv("ORDERSJOB", "orders-s3cr3t-value-0123456789")
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// --debug shows the requests, so the test knows the upload went in parts.
	out := run("--debug", "s3", "cp", src, "s3://ckpt/q1/state/0/0/1.zip")
	if !strings.Contains(out, "CompleteMultipartUpload") {
		t.Fatal("aws s3 cp did not upload in parts, so this tests nothing")
	}
	got, err := os.ReadFile(filepath.Join(dir, "ckpt", "q1", "state", "0", "0", "1.zip"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("stored %d bytes (%v), want the 20 MiB file", len(got), err)
	}
	noMultipartLeft(t, dir)
	back := filepath.Join(work, "back.zip")
	run("s3", "cp", "s3://ckpt/q1/state/0/0/1.zip", back)
	if b, _ := os.ReadFile(back); !bytes.Equal(b, data) {
		t.Fatalf("read back %d bytes, want the file", len(b))
	}
}

// TestServeRclone: Debian's rclone, with an S3 remote (provider Other,
// path style) at the front door: copyto, cat, lsf, a server-side copy,
// deletefile, and a 12 MiB upload in 5 MiB parts.
func TestServeRclone(t *testing.T) {
	rclone := requireTool(t, "rclone")
	ep, dir, _ := startServe(t)
	work := t.TempDir()
	conf := filepath.Join(work, "rclone.conf")
	if err := os.WriteFile(conf, []byte("[fd]\ntype = s3\nprovider = Other\nendpoint = "+ep+
		"\naccess_key_id = ORDERSJOB\nsecret_access_key = orders-s3cr3t-value-0123456789\nregion = us-east-1\nforce_path_style = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(rclone, append([]string{"--config", conf, "--retries", "1", "--low-level-retries", "1"}, args...)...)
		cmd.Dir = work
		for _, kv := range os.Environ() { // the config file alone says where and who
			if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "RCLONE_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("rclone %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	small := filepath.Join(work, "0.delta")
	os.WriteFile(small, []byte("state v0\n"), 0o644)
	run("copyto", small, "fd:ckpt/q1/state/0/0/1.delta")
	if got := run("cat", "fd:ckpt/q1/state/0/0/1.delta"); got != "state v0\n" {
		t.Fatalf("rclone cat: %q", got)
	}
	run("copyto", "fd:ckpt/q1/state/0/0/1.delta", "fd:ckpt/q1/state/0/0/2.delta")
	if b, _ := os.ReadFile(filepath.Join(dir, "ckpt", "q1", "state", "0", "0", "2.delta")); string(b) != "state v0\n" {
		t.Fatalf("server-side copy stored %q", b)
	}
	if got := run("lsf", "fd:ckpt/q1/state/0/0/"); got != "1.delta\n2.delta\n" {
		t.Fatalf("rclone lsf: %q", got)
	}
	run("deletefile", "fd:ckpt/q1/state/0/0/1.delta")
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "q1", "state", "0", "0", "1.delta")); !os.IsNotExist(err) {
		t.Fatalf("deletefile left the object: %v", err)
	}

	big := filepath.Join(work, "big.zip")
	data := writeRandom(t, big, 12<<20)
	out := run("-vv", "--dump", "headers", "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M", "copyto", big, "fd:ckpt/q1/state/0/0/3.zip")
	if !strings.Contains(out, "uploadId=") {
		t.Fatal("rclone did not upload in parts, so this tests nothing")
	}
	got, err := os.ReadFile(filepath.Join(dir, "ckpt", "q1", "state", "0", "0", "3.zip"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("stored %d bytes (%v), want the 12 MiB file", len(got), err)
	}
	noMultipartLeft(t, dir)
	if back := run("cat", "fd:ckpt/q1/state/0/0/3.zip"); back != string(data) {
		t.Fatalf("rclone cat of the multipart object: %d bytes, want the file", len(back))
	}
}

// TestServeUploadExpiry: with --upload-expiry 1s, an upload the aws CLI
// created and never completed (an executor that crashed mid-upload) is
// aborted by the server's sweep, and serve says so on stderr.
func TestServeUploadExpiry(t *testing.T) {
	aws := requireTool(t, "aws")
	ep, dir, stop := startServeAs(t, serveCreds, "--upload-expiry", "1s")
	cmd := exec.Command(aws, "--endpoint-url", ep, "s3api", "create-multipart-upload", "--bucket", "ckpt", "--key", "q1/state/0/0/SSTs/000009.sst")
	cmd.Env = clientEnv("ORDERSJOB", "orders-s3cr3t-value-0123456789")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("create-multipart-upload: %v\n%s", err, out)
	}
	files := func() (n int) {
		filepath.WalkDir(filepath.Join(dir, "ckpt", "_ckgate", "multipart"), func(_ string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return nil
		})
		return n
	}
	if n := files(); n != 1 {
		t.Fatalf("%d hidden files after create; want the upload's record", n)
	}
	// The sweep runs every second; the upload is gone within a few.
	for deadline := time.Now().Add(time.Minute); files() != 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("upload not expired after a minute")
		}
	}
	if code, errOut := stop(); code != 0 || !strings.Contains(errOut, "aborted 1 multipart upload(s) initiated more than 1s ago") {
		t.Fatalf("serve exited %d, stderr:\n%s", code, errOut)
	}
}
