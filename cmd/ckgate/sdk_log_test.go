//go:build unix

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/internal/hostiletest"
)

// TestAWSSDKWarningsFollowLogLevel: with no AWS credentials the SDK looks
// for an EC2 role and, refused by the instance metadata service, warns
// "falling back to IMDSv1" on stderr by itself. With --log-level off
// (the default) stderr holds ckgate's own error line only; with
// --log-level warn the warning is a ckgate log line.
func TestAWSSDKWarningsFollowLogLevel(t *testing.T) {
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden) // as a host that is not EC2 may answer
	}))
	defer imds.Close()
	home := t.TempDir()
	env := []string{childEnv + "=1", "HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.URL, "AWS_CONFIG_FILE=" + home + "/none", "AWS_SHARED_CREDENTIALS_FILE=" + home + "/none"}
	url := "s3://bucket?region=us-east-1&endpoint=http://127.0.0.1:1&max_attempts=1"
	run := func(args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), hostiletest.Watchdog)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = env // nothing of this process's AWS_* settings
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		cmd.Run()
		return cmd.ProcessState.ExitCode(), errOut.String()
	}
	for _, level := range []string{"", "off"} {
		args := []string{"store", "ls", url}
		if level != "" {
			args = append(args, "--log-level", level)
		}
		code, stderr := run(args...)
		if code == 0 {
			t.Fatalf("%v: exit 0 without credentials", args)
		}
		for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if !strings.HasPrefix(l, "ckgate: ") {
				t.Errorf("%v: stderr has a line that is not ckgate's: %q", args, l)
			}
		}
		if !strings.Contains(stderr, "no EC2 IMDS role found") {
			t.Errorf("%v: the error does not say why (the credentials chain ended at IMDS):\n%s", args, stderr)
		}
	}
	_, stderr := run("--log-level", "warn", "store", "ls", url)
	if !strings.Contains(stderr, `level=WARN msg="falling back to IMDSv1`) || !strings.Contains(stderr, "source=aws-sdk") {
		t.Errorf("--log-level warn: the SDK's warning is not a ckgate log line:\n%s", stderr)
	}
}
