package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/internal/testproc"
	"github.com/ckgate/ckgate/validate"
)

// A test binary started as `ckgate.test validate-access --child` is the
// --as-user child, as the ckgate binary is in production.
func init() {
	if len(os.Args) >= 3 && os.Args[1] == "validate-access" && os.Args[2] == "--"+childFlag {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Run(ctx, Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, append([]string{"ckgate"}, os.Args[1:]...))
		stop()
		os.Exit(code)
	}
}

func validateJSON(t *testing.T, out string) validate.Report {
	t.Helper()
	var rep validate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not a JSON report: %v\n%s", err, out)
	}
	return rep
}

func TestValidateAccessLocal(t *testing.T) {
	root := newRoot(t)
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "validate-access", root).want(t, 0, "OK: ok (11 probes)", "authorization  put if-absent", "Principal: uid=")

	r := ckgate(t, Options{}, "", "validate-access", "--format", "json", root)
	r.want(t, 0)
	rep := validateJSON(t, r.stdout)
	if !rep.OK || rep.URL != "file://"+root || len(rep.Results) != 11 {
		t.Errorf("report: ok=%v url=%q results=%d", rep.OK, rep.URL, len(rep.Results))
	}

	r = ckgate(t, Options{}, "", "validate-access", "--format", "junit", root)
	r.want(t, 0, "<testsuites")
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal([]byte(r.stdout), &suites); err != nil || suites.Tests != 11 || suites.Failures != 0 {
		t.Errorf("junit: %+v, %v\n%s", suites, err, r.stdout)
	}
	// Nothing left but the (empty) probe directory.
	if left := keysLeft(root); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestValidateAccessFailures(t *testing.T) {
	root := newRoot(t)
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	r := ckgate(t, Options{}, "", "validate-access", "--expect-principal", "ckgate-job", root)
	r.wantErr(t, ExitFailure, "1 access probe failed (first: identity/whoami)")
	if !strings.Contains(r.stdout, "UNEXPECTED_PRINCIPAL") {
		t.Errorf("table lacks the code:\n%s", r.stdout)
	}

	// A closed port: the network fails at TCP, nothing later runs.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "CKGATECLOSEDPORT")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "closed-port-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	r = ckgate(t, Options{}, "", "validate-access", "--format", "json", "s3://ckgate-closed/ck?region=us-east-1&path_style=true&endpoint=http://"+addr)
	r.wantErr(t, ExitFailure, "access probe")
	rep := validateJSON(t, r.stdout)
	failed := rep.Failed()
	if len(failed) != 1 || failed[0].Layer != validate.LayerNetwork || failed[0].Code != "ECONNREFUSED" {
		t.Errorf("failures %+v, want network ECONNREFUSED only", failed)
	}
}

func TestValidateAccessUsage(t *testing.T) {
	root := newRoot(t)
	for _, args := range [][]string{
		{"validate-access"},
		{"validate-access", root, root},
		{"validate-access", "--format", "yaml", root},
		{"validate-access", "--as-user", "nobody", "s3://bucket/ck?region=us-east-1"},
		{"validate-access", "--as-user", "1000:", root},
		{"validate-access", "ftp://host/ck"},
		{"validate-access", "--timeout", "0s", root},
		{"validate-access", "--azure-sas", "sv=1&sig=x", "--azure-connection-string", "UseDevelopmentStorage=true", "az://devstoreaccount1/c/ck"},
		{"validate-access", root, "--format", "yaml"}, // flags after the URL are read
	} {
		ckgate(t, Options{}, "", args...).wantErr(t, ExitUsage)
	}
}

// TestValidateAccessInterrupted: a run whose context ends (Ctrl-C) prints
// what it did and exits 130.
func TestValidateAccessInterrupted(t *testing.T) {
	root := newRoot(t)
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := Run(ctx, Options{Stdout: &out, Stderr: &errOut}, []string{"ckgate", "validate-access", root})
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitInterrupted, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "the run was interrupted") {
		t.Errorf("the report does not say it was interrupted:\n%s", out.String())
	}
}

// TestValidateAccessHelpHidesSecrets: the help names the variables, never
// their values.
func TestValidateAccessHelpHidesSecrets(t *testing.T) {
	t.Setenv("AZURE_STORAGE_SAS_TOKEN", "sv=2024&sig=HELPSECRETSIG")
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "AccountName=a;AccountKey=HELPSECRETKEY")
	r := ckgate(t, Options{}, "", "validate-access", "--help")
	r.want(t, 0, "EXIT STATUS", "$AZURE_STORAGE_SAS_TOKEN", "--as-user")
	if strings.Contains(r.stdout, "HELPSECRET") {
		t.Errorf("the help shows a secret:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "--"+childFlag) {
		t.Errorf("the help shows the hidden --%s flag", childFlag)
	}
}

// TestValidateAccessAsUser: --as-user re-executes the program as the
// child with another uid; the kernel refuses the write as that user.
func TestValidateAccessAsUser(t *testing.T) {
	dir, bin := testproc.SelfForOtherUser(t, "ckgate.test")
	old := selfExecutable
	selfExecutable = func() (string, error) { return bin, nil }
	t.Cleanup(func() { selfExecutable = old })

	root := filepath.Join(dir, "ckpt")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	r := ckgate(t, Options{}, "", "validate-access", "--format", "json", "--as-user", "nobody", root)
	r.wantErr(t, ExitFailure)
	rep := validateJSON(t, r.stdout)
	if !strings.HasPrefix(rep.Principal, "uid=65534(") {
		t.Errorf("principal %q, want nobody's", rep.Principal)
	}
	put, _ := rep.Find(validate.LayerAuthorization, validate.OpPut)
	if put.Result != validate.Fail || put.Code != "EACCES" {
		t.Errorf("put: %+v, want a failure with EACCES", put)
	}
	if err := os.Chown(root, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "validate-access", "--as-user", "65534:65534", "--expect-principal", "65534", root).want(t, 0, "OK")
}

// TestValidateAccessAzureSAS: through the CLI flag, a read+list SAS is
// refused at PUT by Azurite with its code, and the token never shows.
func TestValidateAccessAzureSAS(t *testing.T) {
	emu := emulator.Azurite(t)
	name, raw := azureContainer(t, emu)

	cred, err := container.NewSharedKeyCredential(emu.Account, emu.Key)
	if err != nil {
		t.Fatal(err)
	}
	q, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
		Permissions: (&sas.ContainerPermissions{Read: true, List: true}).String(), ContainerName: name}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	token := q.Encode()
	r := ckgate(t, Options{}, "", "validate-access", "--format", "json", "--azure-sas", token, raw)
	r.wantErr(t, ExitFailure)
	rep := validateJSON(t, r.stdout)
	put, _ := rep.Find(validate.LayerAuthorization, validate.OpPut)
	if put.Result != validate.Fail || put.Code != "AuthorizationPermissionMismatch" {
		t.Errorf("put: %+v", put)
	}
	if strings.Contains(r.stdout+r.stderr, q.Signature()) {
		t.Errorf("the SAS signature shows:\n%s%s", r.stdout, r.stderr)
	}
	// The account key itself passes everything.
	ckgate(t, Options{}, "", "validate-access", raw).want(t, 0, "shared key of account")
}
