package main

import (
	"errors"
	"log/slog"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/validate"
)

// selfExecutable finds the program that --as-user re-executes as the
// child; tests point it at a copy the other user may run.
var selfExecutable = os.Executable

// childFlag is the hidden flag that makes validate-access the --as-user
// child: it reads the request on stdin and writes the report as JSON.
const childFlag = "child"

func (e *env) validateCommand() *cli.Command {
	str := func(name, env, usage string) *cli.StringFlag {
		f := &cli.StringFlag{Name: name, Usage: usage, Category: categoryOf(name)}
		if env != "" {
			f.EnvVars = []string{env}
		}
		return f
	}
	return &cli.Command{
		Name:      "validate-access",
		Usage:     "probe a checkpoint store as the job's principal, layer by layer",
		ArgsUsage: "URL",
		Description: "Runs pre-flight probes of URL with the credentials the flags and the environment select\n" +
			"(the same flags and environment the job uses) and reports one result per probe:\n" +
			"pass, fail, skip (a probe it depends on failed) or unknown (could not tell).\n\n" +
			"Layers, in order: credentials (which source won), identity (who the store sees;\n" +
			"--expect-principal fails when it differs), network (DNS, TCP, TLS, with the address),\n" +
			"clock (skew from the server's Date header), container (bucket or container exists),\n" +
			"authorization (LIST, GET of metadata if any, PUT, create-only PUT whose second create must be\n" +
			"refused, compare-and-swap PUT whose stale version must be refused, GET after write, DELETE),\n" +
			"info (versioning, soft delete, object lock where readable), cleanup.\n\n" +
			"The probes write only under _ckgate/preflight/ (one unique key per run) and remove what\n" +
			"they wrote, also after a failure, a timeout or Ctrl-C. Secrets are never printed.\n" +
			"--as-user runs the probes of a local directory in a child process with that user's uid and\n" +
			"gid, so the kernel checks the job user's permissions even when ckgate runs as root.\n" +
			"--format json prints {url, principal, ok, results: [{layer, operation, result, code, message,\n" +
			"duration_ms, ...}]}; --format junit prints JUnit XML for CI. Exit status 0 when every probe\n" +
			"passed (or was unknown), 1 when one failed, 2 for a usage error.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output `FORMAT`: table (or text), json or junit"},
			durationFlag("timeout", validate.DefaultTimeout, "stop probing after `DURATION` (the probe keys are still removed)"),
			durationFlag("max-clock-skew", validate.DefaultMaxSkew, "fail the clock probe beyond `DURATION`"),
			str("expect-principal", "CKGATE_EXPECT_PRINCIPAL", "fail unless the store sees `ID` (an ARN, account, access key id, service account email, Azure object or app id, account name, uid or user name)"),
			str("as-user", "CKGATE_AS_USER", "local disk: probe as `NAME|UID[:GID]` in a child process (needs root)"),
			str("aws-profile", "AWS_PROFILE", "AWS shared config `PROFILE`"),
			str("aws-role-arn", "AWS_ROLE_ARN", "assume `ARN` (with --aws-web-identity-token-file: the web identity role)"),
			str("aws-role-session-name", "AWS_ROLE_SESSION_NAME", "session `NAME` of the assumed role"),
			str("aws-external-id", "CKGATE_AWS_EXTERNAL_ID", "external `ID` the role's trust policy asks for"),
			str("aws-web-identity-token-file", "AWS_WEB_IDENTITY_TOKEN_FILE", "web identity token `FILE` (EKS IRSA)"),
			str("gcs-credentials-file", "GOOGLE_APPLICATION_CREDENTIALS", "Google credentials JSON `FILE`"),
			str("gcs-impersonate", "CLOUDSDK_AUTH_IMPERSONATE_SERVICE_ACCOUNT", "act as service account `EMAIL`"),
			str("azure-connection-string", "AZURE_STORAGE_CONNECTION_STRING", "Azure storage connection `STRING` (secret, never printed)"),
			str("azure-sas", "AZURE_STORAGE_SAS_TOKEN", "Azure SAS `TOKEN` (secret, never printed)"),
			str("azure-client-id", "AZURE_CLIENT_ID", "Entra ID client `ID` (service principal, workload or user-assigned managed identity)"),
			str("azure-tenant-id", "AZURE_TENANT_ID", "Entra ID tenant `ID`"),
			&cli.BoolFlag{Name: "azure-managed-identity", EnvVars: []string{"CKGATE_AZURE_MANAGED_IDENTITY"}, Category: "Azure",
				Usage: "use the host's managed identity only (user-assigned with --azure-client-id)"},
			&cli.BoolFlag{Name: childFlag, Hidden: true},
		},
		Action: e.validateAccess,
	}
}

// categoryOf groups the identity flags in the help.
func categoryOf(flag string) string {
	for _, p := range []struct{ prefix, cat string }{{"aws-", "AWS"}, {"gcs-", "Google Cloud Storage"}, {"azure-", "Azure"}, {"as-user", "Local disk"}} {
		if strings.HasPrefix(flag, p.prefix) {
			return p.cat
		}
	}
	return ""
}

func (e *env) validateAccess(c *cli.Context) error {
	if c.Bool(childFlag) {
		return usageOf(c, validate.ServeChild(c.Context, e.stdin, e.stdout))
	}
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	format, err := formatOf(c, validate.Formats...)
	if err != nil {
		return err
	}
	opts := validate.Options{
		ExpectPrincipal: c.String("expect-principal"),
		Timeout:         flagDuration(c, "timeout"),
		MaxSkew:         flagDuration(c, "max-clock-skew"),
		AsUser:          c.String("as-user"),
		Identity: validate.Identity{
			AWSProfile:              c.String("aws-profile"),
			AWSRoleARN:              c.String("aws-role-arn"),
			AWSRoleSessionName:      c.String("aws-role-session-name"),
			AWSExternalID:           c.String("aws-external-id"),
			AWSWebIdentityTokenFile: c.String("aws-web-identity-token-file"),
			GCSCredentialsFile:      c.String("gcs-credentials-file"),
			GCSImpersonate:          c.String("gcs-impersonate"),
			AzureConnectionString:   c.String("azure-connection-string"),
			AzureSAS:                c.String("azure-sas"),
			AzureClientID:           c.String("azure-client-id"),
			AzureTenantID:           c.String("azure-tenant-id"),
			AzureManagedIdentity:    c.Bool("azure-managed-identity"),
		},
	}
	if opts.Timeout <= 0 || opts.MaxSkew <= 0 {
		return usageErrorf(c, "--timeout and --max-clock-skew must be positive")
	}
	if opts.AsUser != "" {
		exe, err := selfExecutable()
		if err != nil {
			return err
		}
		opts.Child = []string{exe, "validate-access", "--" + childFlag}
	}
	if e.log.Enabled(c.Context, slog.LevelDebug) {
		opts.Wrap = func(s gateway.Store) gateway.Store { return gateway.Intercept(s, e.logRequest) }
	}
	rep, err := validate.Run(c.Context, a[0], opts)
	if rep == nil {
		return usageOf(c, err)
	}
	if werr := validate.WriteReport(e.stdout, rep, format); werr != nil {
		return werr
	}
	if err != nil {
		return err // interrupted: the report shows what ran
	}
	if failed := rep.Failed(); len(failed) > 0 {
		what := "access probes failed"
		if len(failed) == 1 {
			what = "access probe failed"
		}
		return &FindingsError{Count: len(failed), What: what + " (first: " + string(failed[0].Layer) + "/" + failed[0].Operation + ")"}
	}
	return nil
}

// usageOf turns a validate usage error into the CLI's.
func usageOf(c *cli.Context, err error) error {
	if errors.Is(err, validate.ErrUsage) {
		return &UsageError{Command: helpName(c), Err: err}
	}
	return err
}
