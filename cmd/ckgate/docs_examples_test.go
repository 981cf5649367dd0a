//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/demo"
)

// demoFixture lays out in a new directory what a checkout holds after
// `make demo`: the query specs, policies, plans, lifecycle files and Spark
// checkpoints of testdata/, the demo clickstream, demo/checkpoint and demo/out/sessions
// of one complete run, and a store root demo/scratch holding
// notes/readme.md. With archived, demo/archive-1 is an archive of
// demo/checkpoint too (what `ckgate archive demo/checkpoint demo/archive-1`
// makes).
func demoFixture(t *testing.T, archived bool) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"specs", "policies", "plans", "lifecycle", "spark", "delta", "delta-checkpoints"} {
		if err := os.CopyFS(filepath.Join(dir, "testdata", d), os.DirFS(filepath.Join("..", "..", "testdata", d))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := demo.Write(filepath.Join(dir, "demo", "clickstream"), demo.Default()); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "testdata/specs/clickstream-sessions.yaml", "--checkpoint", "demo/checkpoint", "--available-now"},
		{"store", "mb", "demo/scratch"},
		{"store", "put", "testdata/specs/clickstream-sessions.yaml", "demo/scratch", "notes/readme.md"},
	} {
		if r := runChild(t, dir, args...); r.code != 0 {
			t.Fatalf("ckgate %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if archived {
		if r := runChild(t, dir, "archive", "demo/checkpoint", "demo/archive-1"); r.code != 0 {
			t.Fatalf("archive: exit %d\n%s", r.code, r.stderr)
		}
	}
	return dir
}

// offlineExample reports whether an example runs on the local disk alone:
// no cloud URL, no root, nothing but what demoFixture lays out.
func offlineExample(line string) bool {
	for _, s := range []string{"://", "sudo ", "~/", "${", "VERSION", "/data/", "input.json", "report.json", "man -l", "/usr/"} {
		if strings.Contains(line, s) {
			return false
		}
	}
	return true
}

// expectExit is a bash line that runs line and fails unless it exits
// with the status N its "# exit N" comment gives (0 without one).
func expectExit(line string) string {
	m := exitComment.FindStringSubmatch(line)
	if m == nil {
		return line
	}
	line = m[1]
	var code int
	fmt.Sscan(m[2], &code)
	return fmt.Sprintf("set +e; %s; s=$?; set -e; if [ $s -ne %d ]; then echo \"exit $s, want %d: %s\" >&2; exit 1; fi",
		line, code, code, strings.ReplaceAll(line, `"`, `\"`))
}

// TestHelpExamplesRun runs every example of every command's help that
// needs only the local disk, as printed, with bash in a copy of a
// checkout after `make demo`: each must exit 0 (or the status it says).
func TestHelpExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI for every example")
	}
	// The examples run in tree order in one fixture (a checkpoint records
	// absolute paths: it cannot be copied); those of archive and
	// fresh-start, which mark demo/checkpoint archived, each in their own.
	shared := demoFixture(t, true)
	ran := 0
	for _, path := range commandPaths(App(Options{}).Commands, "") {
		var lines []string
		for _, x := range examples[path] {
			if offlineExample(x.line) {
				lines = append(lines, expectExit(x.line))
			}
		}
		if len(lines) == 0 {
			continue
		}
		t.Run("ckgate "+path, func(t *testing.T) {
			dir := shared
			switch path {
			case "archive":
				dir = demoFixture(t, false) // its first example makes demo/archive-1
			case "fresh-start":
				dir = demoFixture(t, true)
			}
			shell(t, dir, strings.Join(lines, "\n"))
		})
		ran += len(lines)
	}
	if ran < 40 {
		t.Fatalf("only %d examples ran", ran)
	}
}

// runnableMarker, on the line before a ```sh fence, marks a block of
// README.md or docs/*.md whose commands TestDocsRunnableBlocks runs.
const runnableMarker = "<!-- runnable -->"

var exitComment = regexp.MustCompile(`^(.*\S)\s+# exit (\d+)$`)

// runnableBlocks returns the bash lines of each runnable block of md: a
// ```sh fenced block right after a runnableMarker line. A line ending in
// "# exit N" must exit N.
func runnableBlocks(md string) [][]string {
	var blocks [][]string
	lines := strings.Split(md, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != runnableMarker || strings.TrimSpace(lines[i+1]) != "```sh" {
			continue
		}
		var b []string
		for i += 2; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			b = append(b, expectExit(lines[i]))
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// TestDocsRunnableBlocks runs every block of README.md and docs/*.md
// marked runnable, as printed, with bash in a copy of a checkout after
// `make demo` (one per file, its blocks in order); a command that
// fails fails the test.
func TestDocsRunnableBlocks(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "..", "README.md")}, files...)
	commands := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		blocks := runnableBlocks(string(data))
		if len(blocks) == 0 {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			dir := demoFixture(t, false)
			for _, b := range blocks {
				shell(t, dir, strings.Join(b, "\n"))
			}
		})
		for _, b := range blocks {
			for _, l := range b {
				if strings.Contains(l, "ckgate ") {
					commands++
				}
			}
		}
	}
	if commands < 10 {
		t.Fatalf("%d ckgate commands in runnable blocks: mark the README's examples %s", commands, runnableMarker)
	}
}

func TestRunnableBlocks(t *testing.T) {
	md := "text\n" + runnableMarker + "\n```sh\nckgate inspect demo/checkpoint\necho x | ckgate policy eval -   # exit 4\n```\n" +
		"```sh\nckgate not-marked\n```\n" + runnableMarker + "\n\n```sh\nckgate marker-not-right-before\n```\n" +
		runnableMarker + "\n```sh\nckgate unterminated"
	got := runnableBlocks(md)
	if len(got) != 2 || len(got[0]) != 2 || got[0][0] != "ckgate inspect demo/checkpoint" ||
		!strings.Contains(got[0][1], "echo x | ckgate policy eval -; s=$?") || !strings.Contains(got[0][1], "-ne 4") ||
		len(got[1]) != 1 || got[1][0] != "ckgate unterminated" {
		t.Fatalf("%q", got)
	}
}
