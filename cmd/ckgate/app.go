package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
)

// version is set at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

// Options are what the CLI takes from its process; tests inject buffers.
type Options struct {
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	Registry *gateway.Registry // nil: stores.Registry(), every backend
	Version  string            // "": the build's version
}

// exitStatusHelp ends every help page.
const exitStatusHelp = `
EXIT STATUS:
   0    success
   1    findings, or a failure (store unavailable, permission denied, ...)
   2    usage error, or unreadable input (bad URL, flag or key; missing key or file)
   3    conflict: the key already exists, a stale version, a checkpoint in use, or fenced
   4    denied by policy
   130  interrupted (SIGINT or SIGTERM)
`

// The help templates; setupCommand adds each command's EXAMPLES and the
// EXIT STATUS section.
var (
	commandHelpTemplate = cli.CommandHelpTemplate
	// The command list is rendered without categories: urfave/cli builds a
	// command's categories only when it runs, so "ckgate help store" would
	// otherwise stop at the COMMANDS section.
	subcommandHelpTemplate = strings.Replace(cli.SubcommandHelpTemplate,
		`{{template "visibleCommandCategoryTemplate" .}}`, `{{template "visibleCommandTemplate" .}}`, 1)
)

// env is the state the commands share: the injected streams, the registry
// and the logger chosen by --log-level.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	registry       *gateway.Registry
	log            *slog.Logger
}

// App builds the ckgate command tree. It never calls os.Exit: RunContext
// returns the error and ExitCode turns it into the process status.
func App(opts Options) *cli.App {
	e := &env{
		stdin:    opts.Stdin,
		stdout:   opts.Stdout,
		stderr:   opts.Stderr,
		registry: opts.Registry,
		log:      slog.New(slog.DiscardHandler),
	}
	if e.stdin == nil {
		e.stdin = strings.NewReader("")
	}
	if e.stdout == nil {
		e.stdout = io.Discard
	}
	if e.stderr == nil {
		e.stderr = io.Discard
	}
	if e.registry == nil {
		e.registry = stores.Registry()
	}
	v := opts.Version
	if v == "" {
		v = version
	}
	app := &cli.App{
		Name:  "ckgate",
		Usage: "checkpoint storage gateway for streaming queries",
		Description: "ckgate keeps the checkpoint of a micro-batch streaming query (Spark Structured Streaming\n" +
			"layout) safe on a local disk, S3, GCS or Azure Blob Storage: atomic, single-writer writes.\n\n" +
			"Store URLs: a plain path, file:///path, s3://bucket/prefix, gs://bucket/prefix,\n" +
			"az://account/container/prefix.",
		Version:               fmt.Sprintf("%s (%s %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH),
		Reader:                e.stdin,
		Writer:                e.stdout,
		ErrWriter:             e.stderr,
		CustomAppHelpTemplate: cli.AppHelpTemplate + examplesSection("") + exitStatusHelp,
		// ckgate --generate-bash-completion: what `ckgate completion` scripts call
		EnableBashCompletion: true,
		HideHelpCommand:      false,
		// urfave/cli calls os.Exit for cli.ExitCoder errors unless this is set.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   onUsageError,
		Suggest:        true, // "did you mean" for an unknown help topic
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:  "log-level",
				Value: "off",
				Usage: "log to stderr at `LEVEL`: off, debug, info, warn or error",
			},
		},
		Before: func(c *cli.Context) error {
			l, err := newLogger(e.stderr, c.String("log-level"))
			if err != nil {
				return err
			}
			e.log = l
			// the stores' SDKs log there too, not on stderr by themselves
			c.Context = gateway.WithLogger(c.Context, l)
			return nil
		},
		Action: groupAction,
		Commands: []*cli.Command{
			e.storeCommand(),
			e.validateCommand(),
			e.runCommand(),
			e.auditCommand(),
			e.policyCommand(),
			e.inspectCommand(),
			e.compatCommand(),
			e.retentionCommand(),
			e.gapCommand(),
			e.archiveCommand(),
			e.restoreCommand(),
			e.freshStartCommand(),
			e.rehearseCommand(),
			e.completionCommand(),
			e.docsCommand(),
			e.serveCommand(),
			e.uiCommand(),
			e.reportCommand(),
		},
	}
	for _, c := range app.Commands {
		setupCommand(c, c.Name)
	}
	return app
}

// setupCommand gives c (named name in full: "retention plan") and its
// subcommands the EXAMPLES and EXIT STATUS help sections, typed usage
// errors and --json next to --format.
func setupCommand(c *cli.Command, name string) {
	c.OnUsageError = onUsageError
	addJSONFlag(c)
	if len(c.Subcommands) > 0 {
		c.CustomHelpTemplate = subcommandHelpTemplate + examplesSection(name) + exitStatusHelp
		if c.Action == nil {
			c.Action = groupAction
		}
	} else {
		c.CustomHelpTemplate = commandHelpTemplate + examplesSection(name) + exitStatusHelp
		c.HideHelpCommand = true // "help" is an argument of a leaf command, not a topic
	}
	for _, sub := range c.Subcommands {
		setupCommand(sub, name+" "+sub.Name)
	}
}

// groupAction runs for the app or a command group without a subcommand:
// it shows the help, or refuses an unknown command name.
func groupAction(c *cli.Context) error {
	if c.Args().Present() {
		name := c.Args().First()
		return usageErrorf(c, "unknown command %q%s", name, didYouMean(name, commandNames(c.Command.Subcommands), false))
	}
	if c.Command == nil || c.Command.Name == "" || c.Command.Name == c.App.Name {
		return cli.ShowAppHelp(c)
	}
	return cli.ShowSubcommandHelp(c)
}

// onUsageError types a flag-parse error, with a "did you mean" for an
// unknown flag.
func onUsageError(c *cli.Context, err error, _ bool) error {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok && c.Command != nil {
		err = fmt.Errorf("%w%s", err, didYouMean(name, flagNames(c.Command.Flags), true))
	}
	return &UsageError{Command: helpName(c), Err: err}
}

// helpName is the full name of the running command ("ckgate store put").
func helpName(c *cli.Context) string {
	if c.Command != nil && c.Command.HelpName != "" {
		return c.Command.HelpName
	}
	return c.App.Name
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	switch strings.ToLower(level) {
	case "off", "":
		return slog.New(slog.DiscardHandler), nil
	case "debug":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		return nil, &UsageError{Command: "ckgate", Err: fmt.Errorf("--log-level %q: want off, debug, info, warn or error", level)}
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: redactAttr})), nil
}

// redactAttr redacts every text a log line carries (gateway.Redact): call
// sites redact the URLs they log, and this catches what they miss.
func redactAttr(_ []string, a slog.Attr) slog.Attr {
	switch v := a.Value.Resolve(); {
	case v.Kind() == slog.KindString:
		a.Value = slog.StringValue(gateway.Redact(v.String()))
	case v.Kind() == slog.KindAny:
		if err, ok := v.Any().(error); ok {
			a.Value = slog.StringValue(gateway.Redact(err.Error()))
		} else if s, ok := v.Any().(fmt.Stringer); ok {
			a.Value = slog.StringValue(gateway.Redact(s.String()))
		}
	}
	return a
}

// Run runs the CLI with args (args[0] is the program name), prints an error
// to stderr as "ckgate: <message>" and returns the exit status.
func Run(ctx context.Context, opts Options, args []string) int {
	err := runApp(ctx, App(opts), args)
	if err != nil && ctx.Err() != nil && !errors.Is(err, context.Canceled) {
		err = &interruptedError{err: err}
	}
	stderr := opts.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	report(stderr, err)
	return ExitCode(err)
}

// report prints err for a person: one "ckgate: " line, and for a usage
// error a pointer to the help.
func report(w io.Writer, err error) {
	if err == nil {
		return
	}
	fmt.Fprintf(w, "ckgate: %s\n", gateway.Redact(err.Error()))
	var ue *UsageError
	if errors.As(err, &ue) && ue.Command != "" {
		fmt.Fprintf(w, "Run '%s --help' for usage.\n", ue.Command)
	}
}
