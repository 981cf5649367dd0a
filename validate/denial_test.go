package validate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/validate"
)

// layersBefore checks that every probe of the layers before the
// authorization layer passed; identity (no STS on an emulator) and
// existence (bucket metadata refused) may be unknown.
func layersBefore(t *testing.T, rep *validate.Report) {
	t.Helper()
	for _, res := range rep.Results {
		switch res.Layer {
		case validate.LayerAuthorization, validate.LayerInfo, validate.LayerCleanup:
			continue
		case validate.LayerContainer, validate.LayerIdentity:
			if res.Result == validate.Unknown {
				continue
			}
		}
		if res.Result != validate.Pass {
			t.Errorf("%s/%s = %s before the authorization layer: %s", res.Layer, res.Operation, res.Result, res.Message)
		}
	}
}

// containerSAS signs a container SAS of account key with perms.
func containerSAS(t *testing.T, containerName string, perms sas.ContainerPermissions) string {
	t.Helper()
	cred, err := container.NewSharedKeyCredential(azemu.Account, azemu.Key)
	if err != nil {
		t.Fatal(err)
	}
	q, err := sas.BlobSignatureValues{
		Protocol:      sas.ProtocolHTTPSandHTTP,
		ExpiryTime:    time.Now().Add(time.Hour).UTC(),
		Permissions:   perms.String(),
		ContainerName: containerName,
	}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	return q.Encode()
}

// TestAzureRestrictedSAS: real refusals by Azurite of a container SAS
// without write or delete permission, at the authorization layer, with
// Azure's error code; the SAS never shows in the report.
func TestAzureRestrictedSAS(t *testing.T) {
	k := kindNamed(t, "azure")
	raw := k.newURL(t)
	containerName := strings.Split(strings.TrimPrefix(raw, "az://"), "/")[1]
	withEndpoint := raw + "?endpoint=" + azemu.ServiceURL

	t.Run("read and list", func(t *testing.T) {
		token := containerSAS(t, containerName, sas.ContainerPermissions{Read: true, List: true})
		rep := run(t, withEndpoint, validate.Options{Identity: validate.Identity{AzureSAS: token}})
		if rep.OK {
			t.Fatalf("ok with a read-only SAS:\n%s", dump(rep))
		}
		layersBefore(t, rep)
		if res := want(t, rep, validate.LayerCredentials, validate.OpResolve, validate.Pass); !strings.Contains(res.Message, "permissions rl") {
			t.Errorf("credentials message %q does not name the SAS permissions", res.Message)
		}
		for _, res := range wantReadOnly(t, rep, "AuthorizationPermissionMismatch") {
			if res.RequestID == "" {
				t.Errorf("%s: no request id", res.Operation)
			}
		}
		for _, op := range []string{validate.OpPutIfMatch, validate.OpGet, validate.OpDelete} {
			want(t, rep, validate.LayerAuthorization, op, validate.Skip)
		}
		want(t, rep, validate.LayerCleanup, validate.OpRemove, validate.Pass)
		noSecret(t, rep, token)
	})

	t.Run("no delete", func(t *testing.T) {
		token := containerSAS(t, containerName, sas.ContainerPermissions{Read: true, Add: true, Create: true, Write: true, List: true})
		rep := run(t, withEndpoint, validate.Options{Identity: validate.Identity{AzureSAS: token}})
		layersBefore(t, rep)
		for _, op := range []string{validate.OpList, validate.OpGetMetadata, validate.OpPut, validate.OpPutIfAbsent, validate.OpPutIfMatch, validate.OpGet} {
			want(t, rep, validate.LayerAuthorization, op, validate.Pass)
		}
		wantDenied(t, rep, validate.OpDelete, "AuthorizationPermissionMismatch")
		// The principal cannot delete, so the probe keys stay: the report
		// says which, and an administrator removes them.
		left := want(t, rep, validate.LayerCleanup, validate.OpRemove, validate.Fail)
		if !strings.Contains(left.Message, rep.ProbeKey) {
			t.Errorf("cleanup message %q does not name the probe key %s", left.Message, rep.ProbeKey)
		}
		st := admin(t, raw)
		for a, err := range st.List(context.Background(), validate.PreflightPrefix) {
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Delete(context.Background(), a.Key, gateway.None()); err != nil {
				t.Fatal(err)
			}
		}
		noSecret(t, rep, token)
	})
}

// noSecret fails when the report, in any format, shows the token's
// signature.
func noSecret(t *testing.T, rep *validate.Report, token string) {
	t.Helper()
	var sig string
	for _, kv := range strings.Split(token, "&") {
		if v, ok := strings.CutPrefix(kv, "sig="); ok {
			sig = v
		}
	}
	if sig == "" {
		t.Fatal("no sig in the token")
	}
	for _, f := range validate.Formats {
		var b bytes.Buffer
		if err := validate.WriteReport(&b, rep, f); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), sig) || strings.Contains(b.String(), token) {
			t.Errorf("the %s report shows the SAS signature", f)
		}
	}
}

// TestS3OtherUsersBucket: a versitygw IAM user who does not own the bucket
// is refused with 403 AccessDenied, reported as permission failures at the
// authorization layer, never as "not found".
func TestS3OtherUsersBucket(t *testing.T) {
	k := kindNamed(t, "s3")
	raw := k.newURL(t)
	if _, err := admin(t, raw).Put(context.Background(), "metadata", []byte(`{"id":"q"}`), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	rep := run(t, raw, validate.Options{Identity: validate.Identity{AWSProfile: "second"}})
	if rep.OK {
		t.Fatalf("ok for a user who does not own the bucket:\n%s", dump(rep))
	}
	layersBefore(t, rep)
	if res := want(t, rep, validate.LayerCredentials, validate.OpResolve, validate.Pass); !strings.Contains(res.Message, "shared credentials file") {
		t.Errorf("credentials %q: want the shared credentials file of the profile", res.Message)
	}
	if masked := gateway.MaskID(s3second.AccessKey); rep.Principal != masked {
		t.Errorf("principal %q, want the second user's access key as %s", rep.Principal, masked)
	}
	for _, res := range rep.Results {
		if res.Kind == "not_found" {
			t.Errorf("%s/%s reported as not found: %s", res.Layer, res.Operation, res.Message)
		}
	}
	for _, op := range []string{validate.OpList, validate.OpGetMetadata, validate.OpPut, validate.OpPutIfAbsent} {
		wantDenied(t, rep, op, "AccessDenied")
	}
	want(t, rep, validate.LayerCleanup, validate.OpRemove, validate.Pass)
	noProbeKeys(t, admin(t, raw))

	// The root, who owns the bucket, passes on the same URL.
	if rep := run(t, raw, validate.Options{}); !rep.OK {
		t.Fatalf("the owner fails:\n%s", dump(rep))
	}
}

// TestClosedPort: nothing listens at the endpoint: the network layer
// fails at TCP with ECONNREFUSED and nothing after it runs.
func TestClosedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for name, raw := range map[string]string{
		"s3":    s3URL("ckgate-closed", "ck", "http://"+addr),
		"azure": "az://devstoreaccount1/closed/ck?endpoint=http://" + addr + "/devstoreaccount1",
	} {
		t.Run(name, func(t *testing.T) {
			// Credentials that would do, if anything listened.
			t.Setenv("AWS_ACCESS_KEY_ID", "CKGATECLOSEDPORT")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "closed-port-secret")
			t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "")
			t.Setenv("AZURE_STORAGE_KEY", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
			rep := run(t, raw, validate.Options{Timeout: 20 * time.Second})
			want(t, rep, validate.LayerCredentials, validate.OpResolve, validate.Pass)
			want(t, rep, validate.LayerNetwork, validate.OpDNS, validate.Pass)
			res := want(t, rep, validate.LayerNetwork, validate.OpTCP, validate.Fail)
			if res.Code != "ECONNREFUSED" || res.Address != addr {
				t.Errorf("tcp: code %q address %q, want ECONNREFUSED at %s", res.Code, res.Address, addr)
			}
			after := false
			for _, r := range rep.Results {
				if r.Layer == validate.LayerNetwork && r.Operation == validate.OpTCP {
					after = true
					continue
				}
				if r.Layer == validate.LayerIdentity || (after && r.Layer != validate.LayerCleanup) {
					if r.Result != validate.Skip {
						t.Errorf("%s/%s = %s after the network failed", r.Layer, r.Operation, r.Result)
					}
				}
			}
		})
	}
}

// TestUnexpectedPrincipal: --expect-principal that differs from who the
// store sees fails the identity layer, and nothing is written as the
// wrong principal.
func TestUnexpectedPrincipal(t *testing.T) {
	each(t, func(t *testing.T, k *kind) {
		raw := k.newURL(t)
		rep := run(t, raw, validate.Options{ExpectPrincipal: "ckgate-job@example.iam.gserviceaccount.com"})
		res := want(t, rep, validate.LayerIdentity, validate.OpWhoAmI, validate.Fail)
		if res.Code != "UNEXPECTED_PRINCIPAL" {
			t.Errorf("code %q, want UNEXPECTED_PRINCIPAL", res.Code)
		}
		for _, op := range []string{validate.OpList, validate.OpPut, validate.OpPutIfAbsent, validate.OpDelete} {
			want(t, rep, validate.LayerAuthorization, op, validate.Skip)
		}
		noProbeKeys(t, admin(t, raw))
	})
}

// TestExpectedPrincipal: the principal the store sees, under any of its
// names, passes --expect-principal.
func TestExpectedPrincipal(t *testing.T) {
	each(t, func(t *testing.T, k *kind) {
		names := map[string][]string{
			"file":  {"0", "root", "0:0", "root:root"},
			"azure": {"devstoreaccount1"},
			"s3":    {s3emu.AccessKey},
		}
		if os.Getuid() != 0 {
			names["file"] = nil
		}
		if len(names[k.name]) == 0 {
			t.Skipf("no name the %s backend can confirm", k.name)
		}
		raw := k.newURL(t)
		for _, name := range names[k.name] {
			rep := run(t, raw, validate.Options{ExpectPrincipal: name})
			if !rep.OK {
				t.Fatalf("--expect-principal %s:\n%s", name, dump(rep))
			}
		}
	})
}

// TestMissingContainer: a bucket, container or directory that does not
// exist fails the container layer with not_found; the authorization
// probes are skipped and write nothing.
func TestMissingContainer(t *testing.T) {
	missing := map[string]func() string{
		"file": func() string { return filepath.Join(t.TempDir(), "absent") },
		"s3": func() string {
			return s3URL("ckgate-absent", "ck", s3emu.Endpoint)
		},
		"gcs":   func() string { return "gs://ckgate-absent/ck" },
		"azure": func() string { return "az://devstoreaccount1/absent/ck" },
	}
	each(t, func(t *testing.T, k *kind) {
		rep := run(t, missing[k.name](), validate.Options{})
		res := want(t, rep, validate.LayerContainer, validate.OpExists, validate.Fail)
		if res.Kind != "not_found" {
			t.Errorf("container kind %q, want not_found: %s", res.Kind, res.Message)
		}
		for _, op := range []string{validate.OpList, validate.OpPut, validate.OpDelete} {
			want(t, rep, validate.LayerAuthorization, op, validate.Skip)
		}
	})
}

// dropCond is a store that silently drops one kind of condition, as a
// backend without conditional writes would.
type dropCond struct {
	gateway.Store
	kind gateway.CondKind
}

func (d dropCond) Put(ctx context.Context, key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	if c.Kind == d.kind {
		c = gateway.None()
	}
	return d.Store.Put(ctx, key, data, c)
}

// TestStoreWithoutConditions: a store that overwrites despite IfAbsent
// fails the create-only probe; one that ignores IfMatch fails the
// compare-and-swap probe.
func TestStoreWithoutConditions(t *testing.T) {
	each(t, func(t *testing.T, k *kind) {
		raw := k.newURL(t)
		for _, tc := range []struct {
			name string
			wrap func(gateway.Store) gateway.Store
			op   string
			code string
		}{
			// The decorator the issue names: an interceptor that turns the
			// refusal of a second create into success.
			{"intercept acknowledges a second create", func(s gateway.Store) gateway.Store {
				return gateway.Intercept(s, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
					err := next(ctx)
					if c.Op == gateway.OpPut && c.Cond.Kind == gateway.CondIfAbsent && gateway.KindOf(err) == gateway.ErrExists {
						return nil
					}
					return err
				})
			}, validate.OpPutIfAbsent, "OVERWRITTEN"},
			{"overwrites despite IfAbsent", func(s gateway.Store) gateway.Store {
				return dropCond{Store: s, kind: gateway.CondIfAbsent}
			}, validate.OpPutIfAbsent, "OVERWRITTEN"},
			{"ignores IfMatch", func(s gateway.Store) gateway.Store {
				return dropCond{Store: s, kind: gateway.CondIfMatch}
			}, validate.OpPutIfMatch, "STALE_ACCEPTED"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rep := run(t, raw, validate.Options{Wrap: tc.wrap})
				res := want(t, rep, validate.LayerAuthorization, tc.op, validate.Fail)
				if res.Code != tc.code {
					t.Errorf("code %q, want %s", res.Code, tc.code)
				}
				failed := rep.Failed()
				if len(failed) != 1 {
					t.Errorf("%d failures, want only %s:\n%s", len(failed), tc.op, dump(rep))
				}
				want(t, rep, validate.LayerCleanup, validate.OpRemove, validate.Pass)
				noProbeKeys(t, admin(t, raw))
			})
		}
	})
}

// TestJSONShape: the JSON report has the documented keys.
func TestJSONShape(t *testing.T) {
	rep := run(t, kindNamed(t, "file").newURL(t), validate.Options{})
	var b bytes.Buffer
	if err := validate.WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"url", "principal", "ok", "results"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("no %q in %s", key, b.String())
		}
	}
	results, _ := doc["results"].([]any)
	if len(results) == 0 {
		t.Fatalf("no results in %s", b.String())
	}
	for _, r := range results {
		m := r.(map[string]any)
		for _, key := range []string{"layer", "operation", "result", "code", "message", "duration_ms"} {
			if _, ok := m[key]; !ok {
				t.Errorf("result %v has no %q", m, key)
			}
		}
	}
}

// TestS3IdentityFromSTS: with an STS endpoint that answers
// (AWS_ENDPOINT_URL_STS; versitygw's IAM API server here) the identity is
// the caller's ARN, and --expect-principal checks it by ARN or account.
func TestS3IdentityFromSTS(t *testing.T) {
	k := kindNamed(t, "s3")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sts, err := emulator.StartVersitygwSTS(ctx, s3emu.AccessKey, s3emu.SecretKey)
	emulator.Require(t, err)
	t.Cleanup(sts.Stop)
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.Endpoint)
	raw := k.newURL(t)
	const root = "arn:aws:iam::000000000000:root"
	for _, expect := range []string{"", root, "000000000000", s3emu.AccessKey} {
		rep := run(t, raw, validate.Options{ExpectPrincipal: expect})
		if !rep.OK || rep.Principal != root {
			t.Fatalf("--expect-principal %q: ok=%v principal %q:\n%s", expect, rep.OK, rep.Principal, dump(rep))
		}
		res := want(t, rep, validate.LayerIdentity, validate.OpWhoAmI, validate.Pass)
		if !strings.Contains(res.Message, "account 000000000000") {
			t.Errorf("identity %q does not name the account", res.Message)
		}
	}
	rep := run(t, raw, validate.Options{ExpectPrincipal: "arn:aws:iam::000000000000:user/job"})
	want(t, rep, validate.LayerIdentity, validate.OpWhoAmI, validate.Fail)
	want(t, rep, validate.LayerAuthorization, validate.OpPut, validate.Skip)
}

// TestCredentialsFailure: credentials that cannot be loaded fail the
// credentials layer (not a usage error) and everything after is skipped,
// except the network and clock probes, which need no credentials.
func TestCredentialsFailure(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AZURE_STORAGE_SAS_TOKEN", "")
	for _, raw := range []string{
		"s3://ckgate-creds/ck?region=us-east-1&profile=ckgate-no-such-profile",
		"az://devstoreaccount1/creds/ck?auth=sas&endpoint=http://127.0.0.1:1/devstoreaccount1",
	} {
		rep := run(t, raw, validate.Options{})
		res := want(t, rep, validate.LayerCredentials, validate.OpResolve, validate.Fail)
		if res.Message == "" {
			t.Errorf("%s: no reason", raw)
		}
		for _, r := range rep.Results[1:] {
			if r.Layer != validate.LayerNetwork && r.Layer != validate.LayerClock && r.Result != validate.Skip {
				t.Errorf("%s: %s/%s = %s after the credentials failed", raw, r.Layer, r.Operation, r.Result)
			}
		}
		if _, ok := rep.Find(validate.LayerAuthorization, validate.OpPut); !ok {
			t.Errorf("%s: the authorization probes are not reported", raw)
		}
	}
}

// TestUsageErrors: requests that cannot run probe nothing.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		url string
		id  validate.Identity
	}{
		{"ftp://host/ck", validate.Identity{}},
		{"s3://UPPER/ck", validate.Identity{}},
		{"gs://b", validate.Identity{}},
		{"az://devstoreaccount1/c/ck", validate.Identity{AzureSAS: "sv=1&sig=x", AzureConnectionString: "UseDevelopmentStorage=true"}},
		{"az://devstoreaccount1/c/ck?auth=key", validate.Identity{AzureSAS: "sv=1&sig=x"}},
		{"s3://bucket/ck?region=us-east-1&profile=a", validate.Identity{AWSProfile: "b"}},
		{"s3://bucket/ck?region=us-east-1", validate.Identity{AWSWebIdentityTokenFile: "/var/run/token-not-the-env"}},
	} {
		rep, err := validate.Run(context.Background(), tc.url, validate.Options{Identity: tc.id})
		if !errors.Is(err, validate.ErrUsage) || rep != nil {
			t.Errorf("%s %+v: %v, want ErrUsage and no report", tc.url, tc.id, err)
		}
		if err != nil && strings.Contains(err.Error(), "sig=x") {
			t.Errorf("the error shows the SAS: %v", err)
		}
	}
}
