//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/internal/hostiletest"
)

// TestDocsManWritesPage: `ckgate docs man DIR` writes DIR/ckgate.1 from
// the command tree (every command, its examples, the exit status) that
// man reads without a warning; a second run replaces it, and a symbolic
// link at its name is replaced, never written through.
func TestDocsManWritesPage(t *testing.T) {
	// urfave/cli shares one help command among every App and adds it to
	// groups as they run: after these, it is among its own subcommands.
	for _, args := range [][]string{{"help", "help"}, {"store", "help", "help"}, {"help", "store"}, {"retention", "help"}} {
		ckgate(t, Options{}, "", args...)
	}
	dir := filepath.Join(t.TempDir(), "man")
	r := ckgate(t, Options{}, "", "docs", "man", dir)
	r.want(t, 0, "wrote "+filepath.Join(dir, "ckgate.1"))
	page, err := os.ReadFile(filepath.Join(dir, "ckgate.1"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	for _, s := range []string{`.TH ckgate 1`, ".SH NAME", ".SH SYNOPSIS", ".SH COMMANDS", ".SH EXAMPLES", ".SH EXIT STATUS",
		"ckgate retention plan", "--min-batches"} {
		if !strings.Contains(text, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	for _, path := range commandPaths(App(Options{}).Commands, "") {
		if path != "" && !strings.Contains(text, examples[path][0].line) {
			t.Errorf("the page lacks the first example of ckgate %s", path)
		}
	}
	if _, err := exec.LookPath("man"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), hostiletest.Watchdog)
		defer cancel()
		cmd := exec.CommandContext(ctx, "man", "-l", "--warnings", filepath.Join(dir, "ckgate.1"))
		cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=100")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil || errOut.Len() > 0 {
			t.Errorf("man -l: %v\n%s", err, errOut.String())
		}
		if !strings.Contains(out.String(), "EXIT STATUS") {
			t.Errorf("man -l shows no EXIT STATUS:\n%s", out.String())
		}
	}

	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "ckgate.1"))
	if err := os.Symlink(outside, filepath.Join(dir, "ckgate.1")); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "docs", "man", "--section", "1", dir).want(t, 0)
	if b, _ := os.ReadFile(outside); string(b) != "keep me" {
		t.Fatalf("docs man wrote through a symbolic link: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "ckgate.1")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("ckgate.1 after the second run: %v %v", fi, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("docs man left %d files in %s, want 1", len(ents), dir)
	}

	ckgate(t, Options{}, "", "docs", "man", "--section", "0", dir).wantErr(t, 2, "--section 0")
	ckgate(t, Options{}, "", "docs", "man").wantErr(t, 2)
}
