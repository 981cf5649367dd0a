package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/ckgate/ckgate/engine/demo"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/emulator"
)

// TestSecretsNeverShown runs the CLI against versitygw (S3) and Azurite
// with recognisable secret values in every place a user puts one: the
// S3 secret key and session token in the environment (right and wrong
// ones), a password in a URL's user info, a secret in a URL's query, the
// Azure account key (environment and connection string, right and wrong),
// a SAS token (environment and --azure-sas), and an http sink whose URL
// carries a token and whose headers carry a bearer token. The commands run
// with --log-level debug, in every --format, succeeding and failing. Then
// stdout, stderr, every file written (checkpoints, sink output, decision
// logs, archives) and every object in the buckets are searched for each
// secret, raw and URL-, base64- and JSON-encoded: any hit fails.
func TestSecretsNeverShown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two emulators")
	}
	lc := &leakCheck{secrets: map[string]string{}}
	t.Run("s3", func(t *testing.T) { secretsS3(t, lc) })
	t.Run("azure", func(t *testing.T) { secretsAzure(t, lc) })
	t.Logf("secrets: %d commands, %d secret values in %d forms each, %d bytes of output, %d files, %d objects searched; %d hits",
		lc.commands, len(lc.secrets), len(forms("x")), lc.bytes, lc.files, lc.objects, len(lc.hits))
	names := make([]string, 0, len(lc.secrets))
	for n := range lc.secrets {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("secret values checked: %s", strings.Join(names, ", "))
	for _, h := range lc.hits {
		t.Error(h)
	}
}

// leakCheck collects secret values and searches what the CLI produced.
type leakCheck struct {
	secrets                         map[string]string // what → value
	commands, bytes, files, objects int
	hits                            []string
}

func secret(label string) string {
	return "SECRETckgate" + label + strings.ToUpper(rand.Text()[:16])
}

func (lc *leakCheck) add(what, value string) string {
	lc.secrets[what] = value
	return value
}

// forms are the encodings a secret could leak in.
func forms(v string) map[string]string {
	j, _ := json.Marshal(v)
	return map[string]string{
		"raw":          v,
		"query-escape": url.QueryEscape(v),
		"path-escape":  url.PathEscape(v),
		"json":         strings.Trim(string(j), `"`),
		"base64":       base64.StdEncoding.EncodeToString([]byte(v)),
		"base64url":    base64.URLEncoding.EncodeToString([]byte(v)),
		"base64raw":    base64.RawStdEncoding.EncodeToString([]byte(v)),
	}
}

func (lc *leakCheck) scan(where, text string) {
	lc.bytes += len(text)
	found := false
	for what, v := range lc.secrets {
		fs := forms(v)
		for _, form := range []string{"raw", "query-escape", "path-escape", "json", "base64", "base64url", "base64raw"} {
			f := fs[form]
			if i := strings.Index(text, f); i >= 0 {
				lc.hits = append(lc.hits, fmt.Sprintf("%s shows the %s (%s form) at byte %d: …%s…",
					where, what, form, i, mask(text[max(0, i-80):min(len(text), i+len(f)+40)], f)))
				found = true
				break
			}
		}
	}
	if i := strings.Index(text, "SECRETckgate"); i >= 0 && !found {
		lc.hits = append(lc.hits, fmt.Sprintf("%s shows a secret's prefix at byte %d: …%s<SECRET>…", where, i,
			text[max(0, i-80):i]))
	}
}

// wantCode is want for commands whose stderr starts with debug logs.
func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// mask replaces the secret in a context excerpt, so that a failing test
// does not print it either.
func mask(s, secret string) string { return strings.ReplaceAll(s, secret, "<SECRET>") }

// run runs the CLI in process and searches its output.
func (lc *leakCheck) run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	r := ckgate(t, Options{}, stdin, args...)
	lc.commands++
	lc.scan("ckgate "+strings.Join(redactArgs(lc, args), " ")+" (stdout)", r.stdout)
	lc.scan("ckgate "+strings.Join(redactArgs(lc, args), " ")+" (stderr)", r.stderr)
	return r
}

// redactArgs masks the secrets in a command line, for messages.
func redactArgs(lc *leakCheck, args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, v := range lc.secrets {
			for _, f := range forms(v) {
				a = strings.ReplaceAll(a, f, "<SECRET>")
			}
		}
		out[i] = a
	}
	return out
}

// scanDir searches every file under dir.
func (lc *leakCheck) scanDir(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lc.files++
		lc.scan("file "+p, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scanStore searches every object of the store at raw.
func (lc *leakCheck) scanStore(t *testing.T, raw string) {
	t.Helper()
	ctx := context.Background()
	st, err := stores.Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer gateway.Close(st)
	for a, err := range st.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := st.Get(ctx, a.Key)
		if err != nil {
			t.Fatal(err)
		}
		lc.objects++
		lc.scan("object "+a.Key, a.Key+"\n"+string(data))
	}
}

// secretsWork lays out a run's input (spec files, events) under in and
// returns the spec path; outputs go elsewhere. sinkLine replaces the demo
// spec's sink.
func secretsSpec(t *testing.T, in, name, sinkLine string) string {
	t.Helper()
	events := filepath.Join(in, "events")
	if _, err := os.Stat(events); err != nil {
		if _, err := demo.Write(events, demo.Default()); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile("../../testdata/specs/clickstream-sessions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "path: demo/clickstream", "path: '"+events+"'", 1)
	s = strings.Replace(s, "sink: {kind: files, path: demo/out/sessions, format: jsonl}", sinkLine, 1)
	s = strings.Replace(s, "name: clickstream-sessions", "name: "+name, 1)
	if !strings.Contains(s, sinkLine) {
		t.Fatal("the demo spec's sink line changed")
	}
	p := filepath.Join(in, name+".yaml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hookReceiver is the http sink's endpoint: it answers status (204 or a
// failure) and checks that the secret header arrived.
func hookReceiver(t *testing.T, status *atomic.Int32, header string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != header {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(int(status.Load()))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func secretsS3(t *testing.T, lc *leakCheck) {
	user := emulator.S3User{AccessKey: "CKGATEAKID" + rand.Text()[:10], SecretKey: lc.add("S3 secret key", secret("S3KEY")), Role: "admin"}
	emu, err := emulator.StartVersitygwIAM(startCtx(t), user)
	emulator.Require(t, err)
	t.Cleanup(emu.Stop)
	emu.SetEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", user.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", user.SecretKey)
	lc.add("S3 root secret key", emu.SecretKey)

	q := s3Query(emu, emu.Endpoint).Encode()
	b := bucketName()
	bucket := "s3://" + b + "?" + q
	ck := "s3://" + b + "/ck?" + q
	in, out := t.TempDir(), t.TempDir()
	dlog := filepath.Join(out, "decisions.jsonl")
	debug := []string{"--log-level", "debug"}
	cmd := func(args ...string) []string { return append(append([]string{}, debug...), args...) }

	lc.run(t, "", cmd("store", "mb", bucket)...).want(t, 0)
	lc.run(t, "hello", cmd("store", "put", "-", ck, "notes/x")...).want(t, 0)
	for _, f := range []string{"table", "json"} {
		lc.run(t, "", cmd("store", "ls", "-r", "--format", f, ck)...).want(t, 0)
	}
	lc.run(t, "", cmd("store", "cat", ck, "notes/x")...).want(t, 0)
	lc.run(t, "", cmd("store", "rm", ck, "notes/x")...).want(t, 0)
	for _, f := range []string{"table", "json", "junit"} {
		lc.run(t, "", cmd("validate-access", "--format", f, ck)...).want(t, 0)
	}

	// run: file sink on S3; http sink with a token in its URL and headers.
	spec := secretsSpec(t, in, "files", "sink: {kind: files, path: '"+"s3://"+b+"/out?"+q+"', format: jsonl}")
	lc.run(t, "", cmd("run", "--checkpoint", ck, "--available-now", "--format", "json", spec)...).want(t, 0)
	lc.run(t, "", cmd("run", "--checkpoint", ck, "--available-now", "--format", "text", spec)...).want(t, 0)
	var status atomic.Int32
	status.Store(http.StatusNoContent)
	header := "Bearer " + lc.add("http sink header", secret("HDR"))
	hook := hookReceiver(t, &status, header) + "/hook?token=" + lc.add("http sink URL token", secret("HOOK"))
	httpSink := fmt.Sprintf("sink: {kind: http, url: '%s', headers: {Authorization: '%s'}, batch_size: 50, timeout: 5s}", hook, header)
	hspec := secretsSpec(t, in, "hook", httpSink)
	ckHTTP := "s3://" + b + "/ck-http?" + q
	lc.run(t, "", cmd("run", "--checkpoint", ckHTTP, "--batches", "2", "--format", "json", hspec)...).want(t, 0)
	status.Store(http.StatusInternalServerError)
	r := lc.run(t, "", cmd("run", "--checkpoint", ckHTTP, "--available-now", "--format", "text", hspec)...)
	if r.code == 0 {
		t.Fatalf("the http sink's failure did not fail the run:\n%s", r.stdout)
	}
	status.Store(http.StatusNoContent)
	lc.run(t, "", cmd("run", "--checkpoint", ckHTTP, "--available-now", "--format", "json", hspec)...).want(t, 0)
	// An endpoint that refuses connections (the transport error names the
	// URL), and a spec whose sink URL does not parse.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	dead := secretsSpec(t, in, "dead", fmt.Sprintf("sink: {kind: http, url: '%s/hook?token=%s', batch_size: 50, timeout: 2s}",
		closed.URL, lc.add("unreachable http sink URL token", secret("DEAD"))))
	if r := lc.run(t, "", cmd("run", "--checkpoint", "s3://"+b+"/ck-dead?"+q, "--available-now", dead)...); r.code == 0 {
		t.Fatal("a run against a closed port succeeded")
	}
	bad := secretsSpec(t, in, "bad", fmt.Sprintf("sink: {kind: http, url: 'ftp://u:%s@host/hook?token=%s'}",
		lc.add("bad http sink URL password", secret("BADPW")), lc.add("bad http sink URL token", secret("BADTOK"))))
	lc.run(t, "", cmd("run", "--checkpoint", "s3://"+b+"/ck-bad?"+q, "--batches", "1", bad)...)
	lc.run(t, "", cmd("compat", "--spec", bad, ckHTTP)...)

	for _, f := range []string{"table", "json"} {
		lc.run(t, "", cmd("inspect", "--format", f, "--sink", "s3://"+b+"/out?"+q, ck)...)
		lc.run(t, "", cmd("inspect", "--format", f, ckHTTP)...)
		lc.run(t, "", cmd("compat", "--format", f, "--spec", hspec, ckHTTP)...)
		lc.run(t, "", cmd("compat", "--format", f, "--print-recorded", ckHTTP)...)
		lc.run(t, "", cmd("retention", "plan", "--format", f, "--min-batches", "2", ck)...)
	}
	for _, f := range []string{"table", "json", "junit", "sarif"} {
		lc.run(t, "", cmd("audit", "--format", f, bucket)...)
	}
	lc.run(t, "", cmd("retention", "apply", "--min-batches", "20", "--decision-log", dlog, ck)...)
	lc.run(t, "", cmd("archive", "--decision-log", dlog, ck, filepath.Join(out, "archive"))...)
	lc.run(t, "", cmd("archive", "--decision-log", dlog, ckHTTP, "s3://"+b+"/archive?"+q)...)

	// Failing credentials and secrets in URLs: refused, never echoed.
	t.Setenv("AWS_SESSION_TOKEN", lc.add("S3 session token", secret("STS")))
	lc.run(t, "", cmd("store", "ls", ck)...)
	lc.run(t, "", cmd("validate-access", "--format", "json", ck)...)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", lc.add("wrong S3 secret key", secret("WRONG")))
	lc.run(t, "", cmd("store", "ls", ck)...).wantCode(t, ExitFailure)
	lc.run(t, "", cmd("store", "put", "-", ck, "k")...)
	for _, f := range []string{"table", "json", "junit"} {
		lc.run(t, "", cmd("validate-access", "--format", f, ck)...)
	}
	lc.run(t, "", cmd("run", "--checkpoint", ck, "--available-now", spec)...)
	lc.run(t, "", cmd("inspect", ck)...)
	lc.run(t, "", cmd("audit", "--format", "json", bucket)...)
	t.Setenv("AWS_SECRET_ACCESS_KEY", user.SecretKey)
	userinfo := "s3://" + user.AccessKey + ":" + lc.add("password in URL user info", secret("USERINFO")) + "@" + b + "/ck?" + q
	query := ck + "&secret_access_key=" + lc.add("secret in URL query", secret("QUERY"))
	sig := ck + "&X-Amz-Signature=" + lc.add("signature in URL query", secret("SIG"))
	// URLs that do not parse (a bad escape) are echoed in errors: masked.
	badEscape := "s3://" + user.AccessKey + ":" + lc.add("password in an unparsable URL", secret("BADESC")) + "@" + b + "/c%zz?" + q +
		"&token=" + lc.add("token in an unparsable URL", secret("BADESCTOK"))
	for _, u := range []string{userinfo, query, sig, badEscape} {
		lc.run(t, "", cmd("store", "ls", u)...)
		lc.run(t, "", cmd("validate-access", "--format", "json", u)...)
		lc.run(t, "", cmd("inspect", u)...)
		lc.run(t, "", cmd("run", "--checkpoint", u, "--available-now", spec)...)
	}

	lc.scanDir(t, out)
	lc.scanStore(t, bucket)
}

func secretsAzure(t *testing.T, lc *leakCheck) {
	emu := emulator.Azurite(t)
	lc.add("Azure account key", emu.Key)
	name := containerName()
	q := "?endpoint=" + emu.ServiceURL
	root := "az://" + emu.Account + "/" + name + q
	ck := "az://" + emu.Account + "/" + name + "/ck" + q
	in, out := t.TempDir(), t.TempDir()
	dlog := filepath.Join(out, "decisions.jsonl")
	cmd := func(args ...string) []string { return append([]string{"--log-level", "debug"}, args...) }

	lc.run(t, "", cmd("store", "mb", root)...).want(t, 0)
	lc.run(t, "x", cmd("store", "put", "-", ck, "notes/x")...).want(t, 0)
	for _, f := range []string{"table", "json"} {
		lc.run(t, "", cmd("store", "ls", "-r", "--format", f, ck)...).want(t, 0)
	}
	lc.run(t, "", cmd("store", "cat", ck, "notes/x")...).want(t, 0)
	for _, f := range []string{"table", "json", "junit"} {
		lc.run(t, "", cmd("validate-access", "--format", f, ck)...).want(t, 0)
	}
	spec := secretsSpec(t, in, "az", "sink: {kind: files, path: '"+filepath.Join(out, "sink")+"', format: jsonl}")
	lc.run(t, "", cmd("run", "--checkpoint", ck, "--available-now", "--format", "json", spec)...).want(t, 0)
	for _, f := range []string{"table", "json"} {
		lc.run(t, "", cmd("inspect", "--format", f, ck)...)
		lc.run(t, "", cmd("retention", "plan", "--format", f, ck)...)
		lc.run(t, "", cmd("audit", "--format", f, root)...)
	}
	lc.run(t, "", cmd("archive", "--decision-log", dlog, ck, filepath.Join(out, "archive"))...)

	// SAS tokens: a read-and-list one by flag and by environment.
	cred, err := container.NewSharedKeyCredential(emu.Account, emu.Key)
	if err != nil {
		t.Fatal(err)
	}
	sq, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
		Permissions: (&sas.ContainerPermissions{Read: true, List: true}).String(), ContainerName: name}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	lc.add("SAS signature", sq.Signature())
	token := sq.Encode()
	for _, f := range []string{"table", "json", "junit"} {
		lc.run(t, "", cmd("validate-access", "--format", f, "--azure-sas", token, ck)...)
	}
	t.Setenv("AZURE_STORAGE_KEY", "")
	t.Setenv("AZURE_STORAGE_SAS_TOKEN", token)
	lc.run(t, "", cmd("store", "ls", "-r", ck)...)
	lc.run(t, "y", cmd("store", "put", "-", ck, "notes/y")...)
	lc.run(t, "", cmd("inspect", "--format", "json", ck)...)
	lc.run(t, "", cmd("run", "--checkpoint", ck, "--available-now", spec)...)
	lc.run(t, "", cmd("validate-access", "--bogus", ck)...)

	// Connection strings: the right key, then a wrong one.
	t.Setenv("AZURE_STORAGE_SAS_TOKEN", "")
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", emu.ConnectionString)
	lc.run(t, "", cmd("store", "ls", ck)...).want(t, 0)
	lc.run(t, "", cmd("validate-access", "--format", "json", ck)...).want(t, 0)
	wrongKey := base64.StdEncoding.EncodeToString([]byte(lc.add("wrong Azure account key", secret("AZKEY")+secret("PAD"))))
	lc.add("wrong Azure account key (base64)", wrongKey)
	wrong := "DefaultEndpointsProtocol=http;AccountName=" + emu.Account + ";AccountKey=" + wrongKey + ";BlobEndpoint=" + emu.ServiceURL + ";"
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", wrong)
	lc.run(t, "", cmd("store", "ls", ck)...).wantCode(t, ExitFailure)
	for _, f := range []string{"table", "json", "junit"} {
		lc.run(t, "", cmd("validate-access", "--format", f, ck)...)
	}
	lc.run(t, "", cmd("validate-access", "--azure-connection-string", wrong, "--format", "json", ck)...)
	lc.run(t, "", cmd("run", "--checkpoint", ck, "--available-now", spec)...)
	lc.run(t, "", cmd("audit", "--format", "json", root)...)
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "")
	t.Setenv("AZURE_STORAGE_KEY", emu.Key)
	for _, u := range []string{
		ck + "&sig=" + lc.add("SAS signature in URL", secret("AZSIG")),
		"az://" + emu.Account + "/" + name + "/c%zz" + q + "&sig=" + lc.add("SAS signature in an unparsable URL", secret("AZBAD")),
		"az://" + emu.Account + "/" + name + "/ck?endpoint=" + url.QueryEscape("http://user:"+lc.add("password in endpoint URL", secret("EPPASS"))+"@"+strings.TrimPrefix(emu.ServiceURL, "http://")),
	} {
		lc.run(t, "", cmd("store", "ls", u)...)
		lc.run(t, "", cmd("validate-access", "--format", "json", u)...)
		lc.run(t, "", cmd("inspect", u)...)
	}

	lc.scanDir(t, out)
	lc.scanStore(t, root)
}
