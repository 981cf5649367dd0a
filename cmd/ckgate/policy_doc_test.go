package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/policy"
)

// docExit is a runnable line's "# exit N" comment.
var docExit = regexp.MustCompile(`^(.*\S)\s+# exit (\d+)$`)

// TestPolicyDocExamplesRun runs every ckgate line of the blocks of
// docs/policy.md marked runnable, in process, in a directory holding a
// copy of testdata/policies (what the lines name), and checks each exits
// 0 or the status its "# exit N" comment gives. The rule table names
// every gateway rule of the catalogue.
func TestPolicyDocExamplesRun(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "policy.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "testdata", "policies"), os.DirFS(filepath.Join("..", "..", "testdata", "policies"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	lines := strings.Split(string(doc), "\n")
	ran := 0
	for i := 0; i+1 < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "<!-- runnable -->" || strings.TrimSpace(lines[i+1]) != "```sh" {
			continue
		}
		for i += 2; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			line, code := lines[i], 0
			if m := docExit.FindStringSubmatch(line); m != nil {
				line = m[1]
				code, _ = strconv.Atoi(m[2])
			}
			args := strings.Fields(line)
			if len(args) == 0 {
				continue
			}
			if args[0] != "ckgate" || strings.ContainsAny(line, `|<>;&'"$`) {
				t.Fatalf("docs/policy.md line %d: %q is not a plain ckgate command", i+1, line)
			}
			if r := ckgate(t, Options{}, "", args[1:]...); r.code != code {
				t.Errorf("docs/policy.md line %d: %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", i+1, line, r.code, code, r.stdout, r.stderr)
			}
			ran++
		}
	}
	if ran < 8 {
		t.Fatalf("%d runnable ckgate lines in docs/policy.md", ran)
	}
	eng, err := policy.New(t.Context(), policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range eng.Rules() {
		if r.Scope != "audit" && !strings.Contains(string(doc), "| `"+r.ID+"` | "+r.Name+" |") {
			t.Errorf("docs/policy.md's rule table lacks %s (%s)", r.ID, r.Name)
		}
	}
}
