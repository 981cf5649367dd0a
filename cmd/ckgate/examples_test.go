package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestEveryCommandHasExamples walks the whole command tree: every command
// and subcommand (and the app) has 2 to 4 examples, each example runs the
// command it documents and names only flags that command (or the app)
// has, and its --help shows them. A command added without examples fails
// here.
func TestEveryCommandHasExamples(t *testing.T) {
	app := App(Options{})
	for _, path := range commandPaths(app.Commands, "") {
		t.Run("ckgate "+path, func(t *testing.T) {
			ex := examples[path]
			if n := len(ex); n < 2 || n > 4 {
				t.Fatalf("%d examples, want 2 to 4: add them to examples in examples.go", n)
			}
			for _, x := range ex {
				if x.what == "" {
					t.Errorf("%s: no description", x.line)
				}
				checkExample(t, app, path, x.line)
			}
			help := ckgate(t, Options{}, "", append(strings.Fields(path), "--help")...)
			help.want(t, 0, "EXAMPLES:", "   # "+ex[0].what+"\n   "+ex[0].line+"\n", "EXIT STATUS:")
		})
	}
}

// checkExample checks that line runs ckgate PATH or one of its
// subcommands, with flags of that command or the app only.
func checkExample(t *testing.T, app *cli.App, path, line string) {
	t.Helper()
	words := exampleWords(line)
	if len(words) == 0 {
		t.Errorf("%q: no ckgate command in it", line)
		return
	}
	var cmd *cli.Command
	var named []string
	cmds := app.Commands
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") {
			continue
		}
		sub := findCommand(cmds, w)
		if sub == nil {
			break
		}
		cmd, cmds, named = sub, sub.Subcommands, append(named, w)
	}
	if got := strings.Join(named, " "); path != "" && got != path && !strings.HasPrefix(got, path+" ") {
		t.Errorf("%q runs ckgate %s, not ckgate %s", line, got, path)
	}
	flags := slices.Clone(app.Flags)
	flags = append(flags, cli.HelpFlag, cli.VersionFlag)
	if cmd != nil {
		flags = append(flags, cmd.Flags...)
	}
	for _, w := range words[1:] {
		if w == "--" {
			break
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if findFlag(flags, name) == nil {
			t.Errorf("%q: %s is not a flag of ckgate %s", line, w, strings.Join(named, " "))
		}
	}
}

// exampleWords are the words of the ckgate command in a shell line (after
// `sudo`, `|`, `<(` or `&&`, up to the next redirection or operator),
// quotes removed; nil when it runs no ckgate.
func exampleWords(line string) []string {
	var words []string
	var cur strings.Builder
	quote := byte(0)
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(ch)
		case ch == '\'' || ch == '"':
			quote, inWord = ch, true
		case ch == ' ' || ch == '\t':
			flush()
		case strings.IndexByte("|;&<>()", ch) >= 0:
			flush()
			words = append(words, string(ch))
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	start := slices.Index(words, "ckgate")
	if start < 0 {
		return nil
	}
	out := []string{}
	for _, w := range words[start:] {
		if len(w) == 1 && strings.Contains("|;&<>()", w) {
			break
		}
		out = append(out, w)
	}
	return out
}

func TestExampleWords(t *testing.T) {
	for line, want := range map[string]string{
		"ckgate inspect demo/checkpoint --json":                "ckgate inspect demo/checkpoint --json",
		"source <(ckgate completion bash)":                     "ckgate completion bash",
		`echo '{"a": 1}' | ckgate policy eval - > out.json`:    "ckgate policy eval -",
		`ckgate archive a b --reason "schema change" && ls b`:  "ckgate archive a b --reason schema change",
		"sudo ckgate validate-access /data/ck --as-user spark": "ckgate validate-access /data/ck --as-user spark",
		`ckgate completion zsh > "${fpath[1]}/_ckgate"`:        "ckgate completion zsh",
		"ls demo": "",
	} {
		if got := strings.Join(exampleWords(line), " "); got != want {
			t.Errorf("exampleWords(%q) = %q, want %q", line, got, want)
		}
	}
}
