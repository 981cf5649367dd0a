package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"
)

// completionCommand is `ckgate completion bash|zsh|fish`: a shell
// completion script made from the command tree itself. The bash and zsh
// scripts ask the binary (ckgate ... --generate-bash-completion) for the
// commands and flags of the line typed so far; the fish script lists them.
func (e *env) completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "Prints the completion script of SHELL to stdout: commands, subcommands and flags complete\n" +
			"from the same command definitions as the help. Load it in the running shell or install it:\n\n" +
			"   bash: source <(ckgate completion bash), or save it to /etc/bash_completion.d/ckgate\n" +
			"   zsh:  save it as _ckgate in a directory of $fpath (compinit must be on)\n" +
			"   fish: save it to ~/.config/fish/completions/ckgate.fish",
		Action: e.completion,
	}
}

func (e *env) completion(c *cli.Context) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	var script string
	switch a[0] {
	case "bash":
		script = bashCompletion
	case "zsh":
		script = zshCompletion
	case "fish":
		if script, err = docApp(c.App).ToFishCompletion(); err != nil {
			return fmt.Errorf("fish completion: %w", err)
		}
	default:
		return usageErrorf(c, "shell %q: want bash, zsh or fish%s", a[0], didYouMean(a[0], []string{"bash", "zsh", "fish"}, false))
	}
	_, err = fmt.Fprint(e.stdout, script)
	return err
}

// docApp is a copy of app's tree for documentation and completion,
// without urfave/cli's help commands and flags (it adds its own): one help
// command value is shared by every App (tests build many) and can end up
// among its own subcommands, which the generators would follow forever.
func docApp(app *cli.App) *cli.App {
	flags := slices.DeleteFunc(slices.Clone(app.Flags), func(f cli.Flag) bool { return f == cli.HelpFlag || f == cli.VersionFlag })
	return &cli.App{Name: app.Name, Usage: app.Usage, UsageText: app.UsageText, Description: app.Description,
		Version: app.Version, Flags: flags, Commands: withoutHelp(app.Commands)}
}

// withoutHelp copies cmds and their subcommands, leaving out "help".
func withoutHelp(cmds []*cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cmds {
		if c.Name == "help" {
			continue
		}
		cp := *c
		cp.Subcommands = withoutHelp(c.Subcommands)
		out = append(out, &cp)
	}
	return out
}

// bashCompletion asks ckgate for the words that may follow the line typed
// so far (the word being completed left out, unless it is a flag) and
// completes from them; with none, bash completes file names.
const bashCompletion = `# bash completion for ckgate: source <(ckgate completion bash)
_ckgate_complete() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	local -a req=("${COMP_WORDS[@]:0:COMP_CWORD}")
	if [[ $cur == -* ]]; then
		req+=("$cur")
	fi
	local IFS=$'\n'
	COMPREPLY=($(compgen -W "$("${req[@]}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
}
complete -o bashdefault -o default -F _ckgate_complete ckgate
`

// zshCompletion does the same for zsh.
const zshCompletion = `#compdef ckgate
# zsh completion for ckgate: save as _ckgate in a directory of $fpath
_ckgate() {
	local -a req opts
	req=("${words[@]:0:CURRENT-1}")
	if [[ ${words[CURRENT]} == -* ]]; then
		req+=("${words[CURRENT]}")
	fi
	opts=("${(@f)$("${req[@]}" --generate-bash-completion 2>/dev/null)}")
	if [[ -n ${opts[1]} ]]; then
		compadd -- "${opts[@]}"
	else
		_files
	fi
}
compdef _ckgate ckgate
`
