package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/stores"
)

type result struct {
	code           int
	stdout, stderr string
}

// ckgate runs the CLI in process with stdin and returns what it printed.
func ckgate(t *testing.T, opts Options, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	opts.Stdin, opts.Stdout, opts.Stderr = strings.NewReader(stdin), &out, &errOut
	code := Run(context.Background(), opts, append([]string{"ckgate"}, args...))
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

func (r result) want(t *testing.T, code int, stdout ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	for _, s := range stdout {
		if !strings.Contains(r.stdout, s) {
			t.Fatalf("stdout lacks %q:\n%s", s, r.stdout)
		}
	}
}

func (r result) wantErr(t *testing.T, code int, stderr ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	if !strings.HasPrefix(r.stderr, "ckgate: ") {
		t.Fatalf("stderr does not start with \"ckgate: \":\n%s", r.stderr)
	}
	for _, s := range stderr {
		if !strings.Contains(r.stderr, s) {
			t.Fatalf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
}

func newRoot(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "ckpt")
}

func writeFile(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHelpHasExitStatus(t *testing.T) {
	for _, args := range [][]string{
		{"help"}, {"--help"}, {}, {"store"}, {"help", "store"}, {"store", "--help"},
		{"store", "ls", "--help"}, {"store", "put", "-h"}, {"store", "help", "rm"},
		{"store", "cat", "--help"}, {"store", "mb", "--help"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			r := ckgate(t, Options{}, "", args...)
			r.want(t, 0, "USAGE:", "EXIT STATUS:", "130")
			if len(args) > 0 && (args[0] == "store" || args[len(args)-1] == "store") && len(args) <= 2 {
				r.want(t, 0, "COMMANDS:", "ls", "cat", "put", "rm", "mb")
			}
		})
	}
	r := ckgate(t, Options{}, "", "store", "put", "--help")
	r.want(t, 0, "FILE URL KEY", "--overwrite", "create-only")
}

func TestVersion(t *testing.T) {
	r := ckgate(t, Options{Version: "v9.8.7"}, "", "--version")
	r.want(t, 0, "v9.8.7", runtime.Version())
	r = ckgate(t, Options{}, "", "-v")
	r.want(t, 0, "ckgate version dev")
}

func TestStoreRoundTrip(t *testing.T) {
	root := newRoot(t)
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0, "ready")
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0) // again: already there is fine

	meta := `{"id":"b3f4c2a0-1111-4222-8333-944445555666"}`
	ckgate(t, Options{}, "", "store", "put", writeFile(t, meta), root, "metadata").
		want(t, 0, fmt.Sprintf(`put "metadata": %d bytes, version `, len(meta)))
	glass := []string{"store", "put", "--reason", "fixture", "--decision-log", filepath.Join(t.TempDir(), "d.jsonl")}
	ckgate(t, Options{}, "v1\n{\"batchWatermarkMs\":0}\n{\"logOffset\":0}", append(glass, "-", root, "offsets/0")...).want(t, 0)
	ckgate(t, Options{}, "v1\n{}", append(glass, "-", root, "offsets/1")...).want(t, 0)
	ckgate(t, Options{}, "v1\n{\"nextBatchWatermarkMs\":0}", append(glass, "-", root, "commits/0")...).want(t, 0)

	ckgate(t, Options{}, "", "store", "cat", root, "metadata").want(t, 0, meta)
	if r := ckgate(t, Options{}, "", "store", "cat", root, "metadata"); r.stdout != meta {
		t.Fatalf("cat printed %q, want exactly %q", r.stdout, meta)
	}

	// Folded listing: one line per directory.
	r := ckgate(t, Options{}, "", "store", "ls", root)
	r.want(t, 0, "KEY", "SIZE", "VERSION", "MODIFIED", "metadata", "offsets/", "(2 objects)", "commits/")
	if strings.Contains(r.stdout, "offsets/0") {
		t.Fatalf("ls without -r shows offsets/0:\n%s", r.stdout)
	}
	// Recursive listing and a prefix: lexical order.
	r = ckgate(t, Options{}, "", "store", "ls", "-r", root, "offsets/")
	r.want(t, 0, "offsets/0", "offsets/1")
	if strings.Contains(r.stdout, "metadata") || strings.Index(r.stdout, "offsets/0") > strings.Index(r.stdout, "offsets/1") {
		t.Fatalf("ls -r URL offsets/ =\n%s", r.stdout)
	}
	// A file:// URL names the same root.
	fileURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(root)}).String()
	ckgate(t, Options{}, "", "store", "ls", "--recursive", fileURL).want(t, 0, "commits/0", "metadata", "offsets/1")

	ckgate(t, Options{}, "", "store", "rm", "--reason", "test", "--decision-log", filepath.Join(t.TempDir(), "d.jsonl"), root, "offsets/1").
		want(t, 0, `removed "offsets/1"`)
	if r := ckgate(t, Options{}, "", "store", "ls", "-r", root); strings.Contains(r.stdout, "offsets/1") {
		t.Fatalf("offsets/1 still listed after rm:\n%s", r.stdout)
	}
}

func TestStoreLsJSON(t *testing.T) {
	root := newRoot(t)
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0)
	ckgate(t, Options{}, "{}", "store", "put", "-", root, "metadata").want(t, 0)
	ckgate(t, Options{}, "v1", "store", "put", "--reason", "fixture", "--decision-log", filepath.Join(t.TempDir(), "d.jsonl"), "-", root, "offsets/0").want(t, 0)

	var entries []lsEntry
	r := ckgate(t, Options{}, "", "store", "ls", "--format", "json", "-r", root)
	r.want(t, 0)
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		t.Fatalf("ls --format json is not JSON: %v\n%s", err, r.stdout)
	}
	if len(entries) != 2 || entries[0].Key != "metadata" || entries[0].Size != 2 ||
		entries[0].Version == "" || entries[0].Modified == nil || entries[1].Key != "offsets/0" {
		t.Fatalf("entries = %+v", entries)
	}

	r = ckgate(t, Options{}, "", "store", "ls", "--format=json", root)
	r.want(t, 0)
	entries = nil
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		t.Fatalf("folded JSON: %v\n%s", err, r.stdout)
	}
	if len(entries) != 2 || !entries[1].Dir || entries[1].Key != "offsets/" || entries[1].Objects != 1 {
		t.Fatalf("folded entries = %+v", entries)
	}

	// An empty listing is an empty array, not nothing.
	r = ckgate(t, Options{}, "", "store", "ls", "--format", "json", root, "state/")
	r.want(t, 0)
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("empty listing = %q", r.stdout)
	}
}

func TestStorePutIsCreateOnly(t *testing.T) {
	root := newRoot(t)
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0)
	ckgate(t, Options{}, "first", "store", "put", "-", root, "notes/0").want(t, 0)

	r := ckgate(t, Options{}, "second", "store", "put", "-", root, "notes/0")
	r.wantErr(t, 3, `"notes/0"`, "already exists", "--overwrite")
	ckgate(t, Options{}, "", "store", "cat", root, "notes/0").want(t, 0, "first")

	ckgate(t, Options{}, "third", "store", "put", "--overwrite", "-", root, "notes/0").want(t, 0)
	if r := ckgate(t, Options{}, "", "store", "cat", root, "notes/0"); r.stdout != "third" {
		t.Fatalf("after --overwrite cat = %q", r.stdout)
	}
}

func TestStoreRmIfMatch(t *testing.T) {
	root := newRoot(t)
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0)
	ckgate(t, Options{}, "a", "store", "put", "-", root, "_ckgate/writer").want(t, 0)
	var entries []lsEntry
	if err := json.Unmarshal([]byte(ckgate(t, Options{}, "", "store", "ls", "-r", "--format", "json", root).stdout), &entries); err != nil || len(entries) != 1 {
		t.Fatalf("ls: %v %+v", err, entries)
	}
	v := entries[0].Version

	ckgate(t, Options{}, "b", "store", "put", "--overwrite", "-", root, "_ckgate/writer").want(t, 0)
	ckgate(t, Options{}, "", "store", "rm", "--if-match", v, root, "_ckgate/writer").wantErr(t, 3, `"_ckgate/writer"`)

	entries = nil
	_ = json.Unmarshal([]byte(ckgate(t, Options{}, "", "store", "ls", "-r", "--format", "json", root).stdout), &entries)
	ckgate(t, Options{}, "", "store", "rm", "--if-match", entries[0].Version, root, "_ckgate/writer").want(t, 0)
}

func TestStoreErrors(t *testing.T) {
	root := newRoot(t)
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"rm missing key", []string{"store", "rm", root, "offsets/7"}, 2, []string{`"offsets/7"`, "not found"}},
		{"cat missing key", []string{"store", "cat", root, "commits/9"}, 2, []string{`"commits/9"`}},
		{"invalid key", []string{"store", "cat", root, "../etc/passwd"}, 2, []string{"invalid key"}},
		{"missing input file", []string{"store", "put", filepath.Join(root, "nope"), root, "k"}, 2, []string{"nope"}},
		{"bad flag", []string{"store", "ls", "--bogus", root}, 2, []string{"bogus", "Run 'ckgate store ls --help'"}},
		{"bad global flag", []string{"--bogus"}, 2, []string{"bogus"}},
		{"unknown flag after arguments", []string{"store", "ls", root, "-x"}, 2, []string{"-x", "Run 'ckgate store ls --help'"}},
		{"too few arguments", []string{"store", "put", "-", root}, 2, []string{"FILE URL KEY"}},
		{"too many arguments", []string{"store", "mb", root, "extra"}, 2, []string{`"extra"`}},
		{"bad format", []string{"store", "ls", "--format", "xml", root}, 2, []string{"table (or text) or json"}},
		{"bad log level", []string{"--log-level", "loud", "store", "ls", root}, 2, []string{"loud"}},
		{"unknown command", []string{"stor"}, 2, []string{`unknown command "stor"`}},
		{"unknown subcommand", []string{"store", "lsx"}, 2, []string{`"lsx"`, "Run 'ckgate store --help'"}},
		{"unknown help topic", []string{"help", "nosuch"}, 2, []string{"nosuch"}},
		{"unknown scheme", []string{"store", "ls", "ftp://h/p?token=hunter2"}, 2, []string{`"ftp"`, "az, file, gs, s3"}},
		{"bad s3 URL", []string{"store", "ls", "s3://ckpt/q?region=eu-west-1&bogus=1"}, 2, []string{"bogus"}},
		{"missing root", []string{"store", "ls", filepath.Join(root, "absent")}, 2, []string{"not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ckgate(t, Options{}, "", tt.args...)
			r.wantErr(t, tt.code, tt.stderr...)
			if strings.Contains(r.stderr, "hunter2") {
				t.Fatalf("stderr leaks a secret:\n%s", r.stderr)
			}
		})
	}
}

// registryWith returns the default registry with "file" wrapped by wrap.
func registryWith(wrap func(gateway.Store) gateway.Store) *gateway.Registry {
	return stores.Registry().Register("file", func(ctx context.Context, u *url.URL) (gateway.Store, error) {
		s, err := filestore.Open(ctx, u)
		if err != nil {
			return nil, err
		}
		return wrap(s), nil
	})
}

func TestStorePutStreamsLargeInput(t *testing.T) {
	var streamed, whole int
	reg := registryWith(func(s gateway.Store) gateway.Store {
		return gateway.Intercept(s, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
			if c.Op == gateway.OpPut && c.Stream {
				streamed++
			} else if c.Op == gateway.OpPut {
				whole++
			}
			return next(ctx)
		})
	})
	root := newRoot(t)
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0)
	big := strings.Repeat("0123456789abcdef", streamThreshold/16) + "tail"

	ckgate(t, Options{Registry: reg}, big, "store", "put", "-", root, "state/0/1.snapshot").want(t, 0, "8388612 bytes")
	ckgate(t, Options{Registry: reg}, "", "store", "put", writeFile(t, big), root, "state/0/2.snapshot").want(t, 0, "8388612 bytes")
	ckgate(t, Options{Registry: reg}, "small", "store", "put", "-", root, "state/0/3.delta").want(t, 0)
	if streamed != 2 || whole != 1 {
		t.Fatalf("streamed %d, whole %d; want 2 streamed puts (stdin and file > 8 MiB) and 1 whole", streamed, whole)
	}
	if r := ckgate(t, Options{}, "", "store", "cat", root, "state/0/1.snapshot"); r.stdout != big {
		t.Fatalf("streamed object differs: %d bytes back", len(r.stdout))
	}
}

func TestPolicyDenialExits4(t *testing.T) {
	reg := registryWith(func(s gateway.Store) gateway.Store {
		return gateway.WithAuthorizer(s, gateway.AuthorizerFunc(func(context.Context, gateway.Call) (gateway.Cond, error) {
			return gateway.Cond{}, errors.New("live checkpoint file")
		}))
	})
	root := newRoot(t)
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0)
	ckgate(t, Options{Registry: reg}, "x", "store", "put", "-", root, "offsets/0").wantErr(t, 4, "denied by policy", `"offsets/0"`)
}

func TestInterruptedExits130(t *testing.T) {
	root := newRoot(t)
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := Run(ctx, Options{Stdin: strings.NewReader("x"), Stdout: &out, Stderr: &errOut},
		[]string{"ckgate", "store", "put", "-", root, "offsets/0"})
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, errOut.String())
	}
	if r := ckgate(t, Options{}, "", "store", "ls", "-r", root); strings.Contains(r.stdout, "offsets/0") {
		t.Fatalf("an interrupted put left offsets/0:\n%s", r.stdout)
	}
}

func TestLogLevelDebugLogsRequests(t *testing.T) {
	root := newRoot(t)
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0)
	r := ckgate(t, Options{}, "x", "--log-level", "debug", "store", "put", "-", root, "commits/0")
	r.want(t, 0)
	for _, s := range []string{"level=DEBUG", "store request", "op=put", "key=commits/0", "cond=if-absent"} {
		if !strings.Contains(r.stderr, s) {
			t.Fatalf("debug log lacks %q:\n%s", s, r.stderr)
		}
	}
	if r := ckgate(t, Options{}, "", "store", "ls", root); r.stderr != "" {
		t.Fatalf("logging is on by default:\n%s", r.stderr)
	}
}
