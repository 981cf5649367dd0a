package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/policy"
	"github.com/ckgate/ckgate/validate"
)

// Security at the CLI: keys out of a local root are refused, a policy
// that cannot be evaluated denies, and validate-access leaves no probe key.
// (Secrets in output: secrets_test.go. The store packages test the same
// rules below the CLI: gateway/storetest, gateway/filestore, policy,
// validate.)

// TestLocalKeysOutOfRootRefused: through `ckgate store put/cat/rm/ls` and
// through filestore directly, keys with "..", absolute keys, and keys
// through symbolic links inside the root that point out of it (a link to
// a directory, one deeper down, a link to a file, relative and absolute)
// are refused as invalid keys (exit 2), and nothing outside the root is
// read, written or removed.
func TestLocalKeysOutOfRootRefused(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, filepath.Join(root, "state", "0"), outside, filepath.Join(outside, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "OUTSIDEckgateContent"
	for _, f := range []string{filepath.Join(outside, "secret"), filepath.Join(outside, "sub", "secret")} {
		if err := os.WriteFile(f, []byte(secret), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"offsets":          "../outside",                      // a checkpoint directory that is a link out
		"commits":          outside,                           // the same, absolute
		"state/0/1.delta":  "../../../outside/secret",         // a file deeper down
		"metadata":         filepath.Join(outside, "secret"),  // a file at the top, absolute
		"state/0/partlink": filepath.Join(outside, "sub"),     // a directory deeper down
		"_ckgate":          "../outside/sub/../../outside",    // a winding way out
		"sources":          "/",                               // the file system root
		"dangling":         filepath.Join(outside, "missing"), // out and absent
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	// A link that stays inside is followed.
	if err := os.WriteFile(filepath.Join(root, "real"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(root, "inlink")); err != nil {
		t.Fatal(err)
	}
	outsideBefore := snapshotTree(t, outside)
	rootBefore := snapshotTree(t, root)

	refused := []string{
		"../outside/secret", "../../etc/passwd", "a/../../outside/secret", "a/../b", "/etc/passwd",
		filepath.Join(outside, "secret"), "//etc/passwd", "./metadata", "a/./b",
		"offsets/secret", "offsets/0", "offsets/sub/secret", "commits/secret", "commits/0",
		"state/0/1.delta", "metadata", "state/0/partlink/secret", "state/0/partlink/new",
		"_ckgate/secret", "_ckgate/writer", "sources/etc/passwd", "dangling", "dangling/x",
	}
	for _, key := range refused {
		t.Run(strings.ReplaceAll(strings.ReplaceAll(key, outside, "OUTSIDE"), "/", "|"), func(t *testing.T) {
			ckgate(t, Options{}, "", "store", "cat", root, key).wantErr(t, ExitUsage, "invalid key")
			ckgate(t, Options{}, "PWNED", "store", "put", "--overwrite", "-", root, key).wantErr(t, ExitUsage, "invalid key")
			ckgate(t, Options{}, "PWNED", "store", "put", "-", root, key).wantErr(t, ExitUsage, "invalid key")
			ckgate(t, Options{}, "", "store", "rm", root, key).wantErr(t, ExitUsage, "invalid key")
		})
	}
	// ls lists the root without following links out of it.
	r := ckgate(t, Options{}, "", "store", "ls", "-r", "--format", "json", root)
	r.want(t, 0)
	if strings.Contains(r.stdout, "secret") || strings.Contains(r.stdout, "passwd") ||
		!strings.Contains(r.stdout, `"inlink"`) || !strings.Contains(r.stdout, `"real"`) {
		t.Errorf("ls -r of the root:\n%s", r.stdout)
	}
	ckgate(t, Options{}, "", "store", "cat", root, "inlink").want(t, 0, "inside")

	// The same keys through the backend itself.
	st, err := filestore.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for _, key := range refused {
		if _, _, err := st.Get(ctx, key); !errors.Is(err, gateway.ErrInvalidKey) {
			t.Errorf("get %q: %v, want an invalid key", key, err)
		}
		for _, c := range []gateway.Cond{gateway.None(), gateway.IfAbsent()} {
			if _, err := st.Put(ctx, key, []byte("PWNED"), c); !errors.Is(err, gateway.ErrInvalidKey) {
				t.Errorf("put %q (%v): %v, want an invalid key", key, c, err)
			}
		}
		if err := st.Delete(ctx, key, gateway.None()); !errors.Is(err, gateway.ErrInvalidKey) {
			t.Errorf("delete %q: %v, want an invalid key", key, err)
		}
	}
	// A list prefix through a link out of the root shows nothing of the outside.
	for _, prefix := range []string{"offsets/", "commits/", "state/0/partlink/", "sources/etc/", "_ckgate/", ""} {
		for a, err := range st.List(ctx, prefix) {
			if err == nil && (strings.Contains(a.Key, "secret") || strings.Contains(a.Key, "passwd")) {
				t.Errorf("list %q shows %s from outside the root", prefix, a.Key)
			}
		}
	}
	sameTree(t, "outside the root", outsideBefore, snapshotTree(t, outside))
	sameTree(t, "the root", rootBefore, snapshotTree(t, root))
}

// TestRunCheckpointThroughLinkOutRefused: `ckgate run` on a checkpoint
// root whose offsets/ directory is a link out of the root writes nothing
// there and fails.
func TestRunCheckpointThroughLinkOutRefused(t *testing.T) {
	dir, sp := demoDir(t)
	ck := filepath.Join(dir, "demo", "checkpoint")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{ck, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(ck, "offsets")); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, dir, "run", "--checkpoint", "demo/checkpoint", "--available-now", "--format", "json", sp)
	if r.code == 0 || !strings.Contains(r.stderr, "invalid key") {
		t.Fatalf("exit %d, want a refusal naming the invalid key\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("the run wrote through the link: %v", ents)
	}
}

// failingPolicy is a user policy whose rule cannot be evaluated for any
// mutation: a builtin error (to_number of a key) under strict builtin
// errors, or a complete rule with two values.
var failingPolicies = map[string]string{
	"builtin error": `package ckgate.gateway.rules.boom

import data.ckgate.lib

deny contains lib.violation("ORG-BOOM", sprintf("%d", [to_number(input.key)])) if input.action in {"put", "delete"}
`,
	"conflicting values": `package ckgate.gateway.rules.twice

import data.ckgate.lib

limit := 1 if input.action in {"put", "delete"}

limit := 2 if input.principal.id != ""

deny contains lib.violation("ORG-TWICE", "never") if limit == 3
`,
}

// TestPolicyEvaluationErrorDenies: a --policy directory whose rule errors
// at evaluation time denies every mutation (fail closed, rule CKG-P000):
// retention apply deletes nothing and archive writes nothing at the
// destination, both exit 4, and the decision log records the denials.
func TestPolicyEvaluationErrorDenies(t *testing.T) {
	for name, rule := range failingPolicies {
		t.Run(name, func(t *testing.T) {
			pol := t.TempDir()
			if err := os.WriteFile(filepath.Join(pol, "rule.rego"), []byte(rule), 0o644); err != nil {
				t.Fatal(err)
			}
			// The policy loads and compiles: only evaluation fails.
			ckgate(t, Options{}, "", "policy", "rules", "--policy", pol).want(t, 0)

			dir := copyTree(t, "checkpoint-version-4.0.0/hdfs/agg")
			before := snapshotTree(t, dir)
			// Without the policy, the plan removes keys.
			ckgate(t, Options{}, "", "retention", "plan", "--min-batches", "2", dir).want(t, 0, "remove 9 keys")
			dlog := filepath.Join(t.TempDir(), "decisions.jsonl")
			r := ckgate(t, Options{}, "", "retention", "apply", "--min-batches", "2", "--policy", pol, "--decision-log", dlog, dir)
			r.wantErr(t, ExitDenied)
			sameTree(t, "retention apply under a failing policy", before, snapshotTree(t, dir))
			wantFailClosed(t, dlog)

			src := copyTree(t, "checkpoint-version-4.0.0/hdfs/agg")
			dest := filepath.Join(t.TempDir(), "archive")
			srcBefore := snapshotTree(t, src)
			dlog = filepath.Join(t.TempDir(), "decisions.jsonl")
			r = ckgate(t, Options{}, "", "archive", "--policy", pol, "--decision-log", dlog, src, dest)
			r.wantErr(t, ExitDenied)
			sameTree(t, "archive source under a failing policy", srcBefore, snapshotTree(t, src))
			if written := keysLeft(dest); len(written) > 0 {
				t.Errorf("archive wrote under a failing policy: %v", written)
			}
			wantFailClosed(t, dlog)
		})
	}
}

// wantFailClosed fails unless the decision log holds denials by the
// fail-closed rule and no allowed mutation.
func wantFailClosed(t *testing.T, dlog string) {
	t.Helper()
	b, err := os.ReadFile(dlog)
	if err != nil {
		t.Fatalf("decision log: %v", err)
	}
	s := string(b)
	if !strings.Contains(s, policy.RuleFailClosed) {
		t.Errorf("the decision log has no %s denial:\n%s", policy.RuleFailClosed, s)
	}
	if strings.Contains(s, `"allow":true`) {
		t.Errorf("the decision log allows a mutation:\n%s", s)
	}
}

// TestValidateAccessLeavesNoProbeKey: validate-access, run as the CLI in a
// child process on the local disk and on S3, leaves nothing under
// _ckgate/preflight/: after a complete run, after --timeout cut it short,
// and after SIGINT at random moments (the run removes its probe keys on
// the way out). A principal that may write but not delete cannot remove
// them: on Azurite with such a SAS, the run fails and its report names
// every key left.
func TestValidateAccessLeavesNoProbeKey(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the CLI")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	// A write probe that started runs to its end past --timeout (see
	// validate's graph.go), so no abandoned write lands after the cleanup.
	check := func(t *testing.T, dir string, env []string, raw string) {
		st, err := stores.Open(context.Background(), raw)
		if err != nil {
			t.Fatal(err)
		}
		defer gateway.Close(st)
		left := func(when string, c *child) {
			t.Helper()
			for a, err := range st.List(context.Background(), validate.PreflightPrefix) {
				if err != nil {
					t.Fatalf("list %s: %v", validate.PreflightPrefix, err)
				}
				t.Fatalf("%s: probe key %s survived\n%s", when, a.Key, c.output())
			}
		}
		c := startChild(t, dir, env, "validate-access", "--format", "json", raw)
		c.wait(t, 2*time.Minute)
		if c.code() != 0 {
			t.Fatalf("validate-access: exit %d\n%s", c.code(), c.output())
		}
		left("a complete run", c)
		for _, d := range []string{"1ms", "5ms", "20ms"} {
			c := startChild(t, dir, env, "validate-access", "--timeout", d, raw)
			c.wait(t, 2*time.Minute)
			left("a run cut short by --timeout "+d, c)
		}
		interrupted := 0
		runs := 0
		for i := 0; i < 8 || (interrupted == 0 && i < 32); i++ {
			runs++
			// SIGINT a random moment after the first probe write began
			// (the debug log announces each store request).
			const firstPut = "op=put key=" + validate.PreflightPrefix
			c := startChildWatching(t, dir, env, []string{firstPut}, "--log-level", "debug", "validate-access", raw)
			select {
			case <-c.exited:
				t.Fatalf("attempt %d: validate-access wrote no probe key\n%s", i, c.output())
			case <-c.seen(firstPut):
			}
			timer := time.NewTimer(time.Duration(r.Int64N(int64(8 * time.Millisecond))))
			select {
			case <-c.exited:
				timer.Stop()
			case <-timer.C:
				_ = c.cmd.Process.Signal(os.Interrupt)
				c.wait(t, 2*time.Minute)
				if c.code() == ExitInterrupted {
					interrupted++
				}
			}
			// -1: the signal came before the handler was installed or
			// after the command returned (the default action then kills).
			if code := c.code(); code != 0 && code != ExitInterrupted && code != -1 {
				t.Fatalf("attempt %d: exit %d\n%s", i, code, c.output())
			}
			left("a run interrupted by SIGINT", c)
		}
		t.Logf("%d of %d runs interrupted midway", interrupted, runs)
		if interrupted == 0 {
			t.Error("no run was interrupted midway: the test proves nothing about cleanup on SIGINT")
		}
	}
	t.Run("file", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "ckpt")
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		check(t, t.TempDir(), nil, root)
	})
	t.Run("s3", func(t *testing.T) {
		_, at := s3Bucket(t, emulator.Versitygw(t))
		check(t, t.TempDir(), nil, at("team/q1"))
	})
	// A principal that may write but not delete: the probe keys cannot go,
	// the run fails, and its report names what is left, which is all that
	// is left.
	t.Run("azure without delete", func(t *testing.T) {
		emu := emulator.Azurite(t)
		name, raw := azureContainer(t, emu)
		cred, err := container.NewSharedKeyCredential(emu.Account, emu.Key)
		if err != nil {
			t.Fatal(err)
		}
		sq, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
			Permissions:   (&sas.ContainerPermissions{Read: true, Add: true, Create: true, Write: true, List: true}).String(),
			ContainerName: name}.SignWithSharedKey(cred)
		if err != nil {
			t.Fatal(err)
		}
		r := ckgate(t, Options{}, "", "validate-access", "--format", "json", "--azure-sas", sq.Encode(), raw)
		r.wantErr(t, ExitFailure)
		rep := validateJSON(t, r.stdout)
		cleanup, _ := rep.Find(validate.LayerCleanup, validate.OpRemove)
		if cleanup.Result != validate.Fail || !strings.Contains(cleanup.Message, rep.ProbeKey) {
			t.Fatalf("cleanup %+v: want a failure naming %s", cleanup, rep.ProbeKey)
		}
		st, err := stores.Open(context.Background(), raw)
		if err != nil {
			t.Fatal(err)
		}
		defer gateway.Close(st)
		for a, err := range st.List(context.Background(), validate.PreflightPrefix) {
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(a.Key, rep.ProbeKey) || !strings.Contains(cleanup.Message, a.Key) {
				t.Errorf("%s is left and the report does not name it: %s", a.Key, cleanup.Message)
			}
		}
	})
}
