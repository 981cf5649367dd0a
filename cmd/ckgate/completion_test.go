//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ckgateOnPath returns a directory holding a `ckgate` executable that runs
// this test binary as the CLI, for a shell to find on PATH.
func ckgateOnPath(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\n%s=1 exec '%s' \"$@\"\n", childEnv, strings.ReplaceAll(bin, "'", `'\''`))
	if err := os.WriteFile(filepath.Join(dir, "ckgate"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shellWatchdog bounds a shell script of shell(): a script still running
// then blocked (it runs the examples of a command, rehearse's drills
// included, on a machine that may be busy).
const shellWatchdog = 5 * time.Minute

// shell runs script with bash in dir, ckgate on its PATH, and returns
// stdout; a non-zero exit fails the test.
func shell(t *testing.T, dir, script string) string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), shellWatchdog)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+ckgateOnPath(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("still running after %s (blocked), killed", shellWatchdog)
		}
		t.Fatalf("bash -c %q: %v\nstdout:\n%s\nstderr:\n%s", script, err, out.String(), errOut.String())
	}
	return out.String()
}

// TestCompletionBash loads `ckgate completion bash` into a real bash and
// completes command, subcommand and flag names with it.
func TestCompletionBash(t *testing.T) {
	complete := func(words ...string) string {
		return fmt.Sprintf(`COMP_WORDS=(%s); COMP_CWORD=%d; _ckgate_complete; echo "${COMPREPLY[*]}"`, strings.Join(words, " "), len(words)-1)
	}
	out := shell(t, t.TempDir(), strings.Join([]string{
		"source <(ckgate completion bash)",
		"complete -p ckgate",
		complete("ckgate", "ret"),
		complete("ckgate", "retention", "pl"),
		complete("ckgate", "retention", "plan", "--min-b"),
		complete("ckgate", "--log-level", "debug", "insp"),
		complete("ckgate", "docs", "''"),
	}, "\n"))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{"complete -o bashdefault -o default -F _ckgate_complete ckgate", "retention", "plan", "--min-batches", "inspect", "man help h"}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d: %q, want %q", i, lines[i], w)
		}
	}
}

// TestCompletionScripts: zsh and fish scripts name every command; an
// unknown shell is a usage error with a suggestion.
func TestCompletionScripts(t *testing.T) {
	// urfave/cli shares one help command among every App and adds it to
	// groups as they run: after these, it is among its own subcommands.
	for _, args := range [][]string{{"help", "help"}, {"store", "help", "help"}, {"help", "store"}, {"retention", "help"}} {
		ckgate(t, Options{}, "", args...)
	}
	zsh := ckgate(t, Options{}, "", "completion", "zsh")
	zsh.want(t, 0, "#compdef ckgate", "--generate-bash-completion", "compdef _ckgate ckgate")
	fish := ckgate(t, Options{}, "", "completion", "fish")
	fish.want(t, 0, "complete -c ckgate")
	if n := strings.Count(fish.stdout, "__fish_ckgate_no_subcommand' -f -l help"); n != 1 {
		t.Errorf("the fish script completes the app's --help %d times", n)
	}
	for _, path := range commandPaths(App(Options{}).Commands, "") {
		if path == "" {
			continue
		}
		words := strings.Fields(path)
		if !strings.Contains(fish.stdout, fmt.Sprintf("-a '%s'", words[len(words)-1])) {
			t.Errorf("the fish script does not complete %q", path)
		}
	}
	ckgate(t, Options{}, "", "completion", "bsh").wantErr(t, 2, `shell "bsh": want bash, zsh or fish (did you mean "bash"?)`)
	ckgate(t, Options{}, "", "completion").wantErr(t, 2)
}
