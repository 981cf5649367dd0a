package azstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
	"github.com/ckgate/ckgate/internal/emulator"
)

func mustURL(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("url %q: %v", raw, err)
	}
	return u
}

func TestParseURL(t *testing.T) {
	ok := []struct {
		raw  string
		want Config
	}{
		{"az://acct/cont", Config{Account: "acct", Container: "cont"}},
		{"az://acct/cont/", Config{Account: "acct", Container: "cont"}},
		{"az://acct/cont/team/query-1/", Config{Account: "acct", Container: "cont", Prefix: "team/query-1"}},
		{"AZ://acct/cont/p", Config{Account: "acct", Container: "cont", Prefix: "p"}},
		{"az://devstoreaccount1/ckpt?endpoint=http://127.0.0.1:10000/devstoreaccount1/", Config{Account: "devstoreaccount1", Container: "ckpt", Endpoint: "http://127.0.0.1:10000/devstoreaccount1"}},
		{"az://acct/cont?auth=key", Config{Account: "acct", Container: "cont", Auth: AuthKey}},
		{"az://acct/cont?auth=auto", Config{Account: "acct", Container: "cont"}},
		{"az://acct/cont?auth=identity&endpoint=https%3A%2F%2Facct.privatelink.blob.core.windows.net", Config{Account: "acct", Container: "cont", Auth: AuthIdentity, Endpoint: "https://acct.privatelink.blob.core.windows.net"}},
		{"az://acct/a-b-1/x y/ü", Config{Account: "acct", Container: "a-b-1", Prefix: "x y/ü"}},
		{"az://acct/$root", Config{Account: "acct", Container: "$root"}},
	}
	for _, tc := range ok {
		t.Run(tc.raw, func(t *testing.T) {
			c, err := ParseURL(mustURL(t, tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if c != tc.want {
				t.Errorf("= %+v, want %+v", c, tc.want)
			}
			back, err := ParseURL(mustURL(t, c.String()))
			if err != nil || back != c {
				t.Errorf("round trip through %q = %+v, %v", c.String(), back, err)
			}
		})
	}
	bad := []struct {
		raw, want, secret string
	}{
		{"s3://acct/cont", "scheme", ""},
		{"az://acct", "no container", ""},
		{"az://acct/", "no container", ""},
		{"az://Acct/cont", "account", ""},
		{"az://ab/cont", "account", ""},
		{"az://acct:443/cont", "account", ""},
		{"az://acct/co", "container", ""},
		{"az://acct/Cont", "container", ""},
		{"az://acct/a--b", "container", ""},
		{"az://acct/-ab", "container", ""},
		{"az://acct/cont/../x", "prefix", ""},
		{"az://acct/cont/a//b", "prefix", ""},
		{"az://acct/cont?auth=bogus", "auth method", ""},
		{"az://acct/cont?endpoint=ftp://h", "endpoint", ""},
		{"az://acct/cont?endpoint=http://", "endpoint", ""},
		{"az://acct/cont?endpoint=http%3A%2F%2Fh%2Fp%3Fsv%3D1%26sig%3DSECRETSIG1", "endpoint", "SECRETSIG1"},
		{"az://acct/cont?endpoint=a&endpoint=b", "given 2 times", ""},
		{"az://acct/cont?region=x", `unknown parameter "region"`, ""},
		{"az://acct/cont?sv=2024&sig=SECRETSIG2", "secret", "SECRETSIG2"},
		{"az://acct/cont?account_key=SECRETKEY3", "secret", "SECRETKEY3"},
		{"az://acct/cont?QWERTYUIOPQWERTYUIOPQWERTYUIOP", "unknown parameter", "QWERTYUIOP"},
		{"az://user:SECRETPASS5@acct/cont", "user info", "SECRETPASS5"},
		{"az://acct/cont#frag", "fragment", ""},
		{"az:acct/cont", "want az://", ""},
	}
	for _, tc := range bad {
		t.Run(tc.raw, func(t *testing.T) {
			_, err := ParseURL(mustURL(t, tc.raw))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("error %q leaks %s", err, tc.secret)
			}
		})
	}
}

// env is a fake environment.
type env map[string]string

func (e env) get(k string) string { return e[k] }

const (
	testKey  = "c2VjcmV0LWtleS1zZWNyZXQta2V5LXNlY3JldC1rZXktc2VjcmV0LWtleQ=="
	testSAS  = "sv=2024-08-04&ss=b&srt=co&sp=rwdlc&se=2030-01-01T00:00:00Z&sig=SECRETSASSIG"
	testConn = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + testKey + ";EndpointSuffix=core.windows.net"
)

func TestChooseCredential(t *testing.T) {
	cases := []struct {
		name    string
		url     string
		env     env
		method  string
		service string
		key     string
		sas     string
		err     string
	}{
		{"identity by default", "az://acct/c0n", env{}, AuthIdentity, "https://acct.blob.core.windows.net", "", "", ""},
		{"connection string first", "az://acct/c0n", env{EnvConnectionString: testConn, EnvKey: "other", EnvSASToken: "sig=x"}, AuthConnectionString, "https://acct.blob.core.windows.net", testKey, "", ""},
		{"key before sas", "az://acct/c0n", env{EnvKey: testKey, EnvSASToken: "sig=x"}, AuthKey, "https://acct.blob.core.windows.net", testKey, "", ""},
		{"sas", "az://acct/c0n", env{EnvSASToken: "?" + testSAS}, AuthSAS, "https://acct.blob.core.windows.net", "", testSAS, ""},
		{"forced identity ignores keys", "az://acct/c0n?auth=identity", env{EnvKey: testKey}, AuthIdentity, "https://acct.blob.core.windows.net", "", "", ""},
		{"forced sas", "az://acct/c0n?auth=sas", env{EnvKey: testKey, EnvSASToken: testSAS}, AuthSAS, "https://acct.blob.core.windows.net", "", testSAS, ""},
		{"forced key missing", "az://acct/c0n?auth=key", env{EnvSASToken: testSAS}, "", "", "", "", EnvKey + " is not set"},
		{"forced sas missing", "az://acct/c0n?auth=sas", env{}, "", "", "", "", EnvSASToken + " is not set"},
		{"forced connection string missing", "az://acct/c0n?auth=connection-string", env{EnvKey: testKey}, "", "", "", "", EnvConnectionString + " is not set"},
		{"anonymous", "az://acct/c0n?auth=anonymous", env{EnvKey: testKey}, AuthAnonymous, "https://acct.blob.core.windows.net", "", "", ""},
		{"endpoint override", "az://acct/c0n?endpoint=http://127.0.0.1:1/acct", env{EnvKey: testKey}, AuthKey, "http://127.0.0.1:1/acct", testKey, "", ""},
		{"connection string endpoint", "az://devstoreaccount1/c0n", env{EnvConnectionString: "AccountName=devstoreaccount1;AccountKey=" + testKey + ";BlobEndpoint=http://127.0.0.1:9/devstoreaccount1/"}, AuthConnectionString, "http://127.0.0.1:9/devstoreaccount1", testKey, "", ""},
		{"endpoint overrides connection string", "az://devstoreaccount1/c0n?endpoint=http://127.0.0.1:8/devstoreaccount1", env{EnvConnectionString: "UseDevelopmentStorage=true"}, AuthConnectionString, "http://127.0.0.1:8/devstoreaccount1", devKey, "", ""},
		{"development storage", "az://devstoreaccount1/c0n", env{EnvConnectionString: "UseDevelopmentStorage=true"}, AuthConnectionString, devEndpoint, devKey, "", ""},
		{"connection string sas", "az://acct/c0n", env{EnvConnectionString: "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=" + testSAS}, AuthConnectionString, "https://acct.blob.core.windows.net", "", testSAS, ""},
		{"connection string suffix", "az://acct/c0n", env{EnvConnectionString: "AccountName=acct;AccountKey=" + testKey + ";EndpointSuffix=core.chinacloudapi.cn"}, AuthConnectionString, "https://acct.blob.core.chinacloudapi.cn", testKey, "", ""},
		{"connection string of another account", "az://acct/c0n", env{EnvConnectionString: "AccountName=other;AccountKey=" + testKey}, "", "", "", "", `for account "other"`},
		{"malformed connection string", "az://acct/c0n", env{EnvConnectionString: "AccountName=acct;garbage"}, "", "", "", "", "malformed connection string"},
		{"connection string without account", "az://acct/c0n", env{EnvConnectionString: "AccountKey=" + testKey}, "", "", "", "", "neither AccountName nor BlobEndpoint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseURL(mustURL(t, tc.url))
			if err != nil {
				t.Fatal(err)
			}
			p, err := choose(c, tc.env.get)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				for _, secret := range []string{testKey, "SECRETSASSIG"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error %q leaks a secret", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.method != tc.method || p.serviceURL != tc.service || p.key != tc.key || p.sas != tc.sas {
				t.Errorf("plan = {%s %s key=%t sas=%q}, want {%s %s key=%t sas=%q}", p.method, p.serviceURL, p.key != "", p.sas, tc.method, tc.service, tc.key != "", tc.sas)
			}
			for _, printed := range []string{p.String(), fmt.Sprintf("%v %+v %#v", p, p, p)} {
				if strings.Contains(printed, testKey) || strings.Contains(printed, "SECRETSASSIG") || strings.Contains(printed, devKey) {
					t.Errorf("printed plan leaks a secret: %s", printed)
				}
			}
		})
	}
}

// openTest opens raw with env against the test pipeline.
func openTest(t *testing.T, raw string, e env) (*Store, error) {
	t.Helper()
	return open(t.Context(), mustURL(t, raw), e.get, testClientOptions())
}

// TestOpenAzurite: Open against Azurite with each credential method.
func TestOpenAzurite(t *testing.T) {
	requireAzurite(t)
	name := newContainerName()
	base := "az://" + azurite.Account + "/" + name
	withEndpoint := base + "/pfx?endpoint=" + url.QueryEscape(azurite.ServiceURL)

	cs, err := openTest(t, base+"/pfx", env{EnvConnectionString: azurite.ConnectionString})
	if err != nil {
		t.Fatal(err)
	}
	if cs.Auth() != AuthConnectionString || cs.Prefix() != "pfx/" {
		t.Errorf("auth %q prefix %q", cs.Auth(), cs.Prefix())
	}
	makeBucket(t, cs)
	if err := cs.MakeBucket(t.Context()); err != nil {
		t.Errorf("make bucket twice: %v", err)
	}
	v, err := cs.Put(t.Context(), "offsets/0", []byte("v1"), gateway.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}

	// Through the registry-facing Open, with the real environment.
	t.Setenv(EnvConnectionString, "")
	t.Setenv(EnvSASToken, "")
	t.Setenv(EnvKey, azurite.Key)
	gs, err := Open(t.Context(), mustURL(t, withEndpoint))
	if err != nil {
		t.Fatal(err)
	}
	if got, gv, err := gs.Get(t.Context(), "offsets/0"); err != nil || gv != v || string(got) != "v1" {
		t.Errorf("open with %s: get = %q %q %v", EnvKey, got, gv, err)
	}
	if err := gateway.Close(gs); err != nil {
		t.Error(err)
	}

	// A read-only SAS for the container: reads work, writes are
	// ErrPermission, and the signature never shows in errors.
	token := containerSAS(t, cs, sas.ContainerPermissions{Read: true, List: true})
	sig := url.Values{}
	if q, err := url.ParseQuery(token); err == nil {
		sig = q
	}
	ro, err := openTest(t, withEndpoint+"&auth=sas", env{EnvSASToken: "?" + token})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := ro.Get(t.Context(), "offsets/0"); err != nil || string(got) != "v1" {
		t.Errorf("sas get = %q %v", got, err)
	}
	if keys := storetest.Keys(t, ro, ""); len(keys) != 1 || keys[0] != "offsets/0" {
		t.Errorf("sas list = %q", keys)
	}
	_, err = ro.Put(t.Context(), "offsets/1", []byte("v"), gateway.IfAbsent())
	storetest.WantKeyKind(t, "", err, "offsets/1", gateway.ErrPermission)
	if !strings.Contains(err.Error(), "AuthorizationPermissionMismatch") {
		t.Errorf("message %q does not name the service code", err)
	}
	if s := sig.Get("sig"); s == "" || strings.Contains(err.Error(), s) || strings.Contains(err.Error(), url.QueryEscape(s)) {
		t.Errorf("message %q leaks the signature (or the SAS has none)", err)
	}
	err = ro.Delete(t.Context(), "offsets/0", gateway.None())
	storetest.WantKeyKind(t, "", err, "offsets/0", gateway.ErrPermission)

	// Development storage with an endpoint override.
	dev, err := openTest(t, withEndpoint, env{EnvConnectionString: "UseDevelopmentStorage=true"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Stat(t.Context(), "offsets/0"); err != nil {
		t.Errorf("development storage stat: %v", err)
	}

	// A missing container is not found, and MakeBucket fixes it.
	other, err := openTest(t, "az://"+azurite.Account+"/"+newContainerName()+"?endpoint="+url.QueryEscape(azurite.ServiceURL), env{EnvKey: azurite.Key})
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Put(t.Context(), "k", nil, gateway.None())
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrNotFound)
	if !strings.Contains(err.Error(), "ContainerNotFound") {
		t.Errorf("message %q does not name ContainerNotFound", err)
	}
	makeBucket(t, other)
	if _, err := other.Put(t.Context(), "k", nil, gateway.None()); err != nil {
		t.Error(err)
	}
}

func containerSAS(t *testing.T, s *Store, perms sas.ContainerPermissions) string {
	t.Helper()
	u, err := s.Client().GetSASURL(perms, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return pu.RawQuery
}

// TestNetworkErrorHidesSAS: a transport failure's message (which quotes
// the request URL) does not carry the SAS signature.
func TestNetworkErrorHidesSAS(t *testing.T) {
	port, err := emulator.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	endpoint := fmt.Sprintf("http://127.0.0.1:%d/acct", port)
	s, err := openTest(t, "az://acct/c0n?endpoint="+url.QueryEscape(endpoint), env{EnvSASToken: testSAS})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, _, err = s.Get(ctx, "k")
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrUnavailable)
	if strings.Contains(err.Error(), "SECRETSASSIG") {
		t.Errorf("message leaks the SAS signature: %q", err)
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Errorf("the transport error is not reachable from %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		env  env
		want string
	}{
		{"az://acct/c0n?auth=key", env{}, EnvKey},
		{"az://acct/c0n", env{EnvKey: "not base64!" + testKey}, "not valid base64"},
		{"az://acct", env{}, "no container"},
		{"az://acct/c0n?auth=identity&endpoint=http://127.0.0.1:1/acct", env{}, "needs an https endpoint"},
	} {
		_, err := openTest(t, tc.raw, tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("open %q: %v, want %q", tc.raw, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), testKey) {
			t.Errorf("open %q: error leaks the key: %v", tc.raw, err)
		}
	}
}

// FuzzParseURL: ParseURL never panics; what it accepts is valid and
// round-trips through Config.String; what it refuses never quotes a query
// value or user info.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"az://acct/cont", "az://acct/cont/a/b/", "az://devstoreaccount1/ckpt?endpoint=http://127.0.0.1:10000/devstoreaccount1",
		"az://acct/cont?auth=sas", "az://acct/cont?sig=SECRETSIGNATURE", "az://u:SECRETPASSWORD@acct/cont",
		"az://acct/cont?endpoint=http%3A%2F%2Fh%3Fsig%3DSECRETSIGNATURE", "az://acct/cont/%2e%2e/x", "az://acct/c--c",
		"az://acct/cont/ü/😀", "az://acct/cont?auth=key&auth=sas", "az:///cont", "az://acct/$root/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		c, err := ParseURL(u)
		if err != nil {
			msg := err.Error()
			shown := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
			var secrets []string
			for _, vals := range u.Query() {
				secrets = append(secrets, vals...)
			}
			if u.User != nil {
				p, _ := u.User.Password()
				secrets = append(secrets, p)
			}
			for _, s := range secrets {
				if len(s) >= 12 && strings.Contains(msg, s) && !strings.Contains(shown, s) {
					t.Fatalf("error %q quotes %q", msg, s)
				}
			}
			return
		}
		if checkAccount(c.Account) != nil || checkContainer(c.Container) != nil {
			t.Fatalf("accepted %+v", c)
		}
		if c.Prefix != "" && gateway.ValidateKey("open", c.Prefix) != nil {
			t.Fatalf("accepted prefix %q", c.Prefix)
		}
		if c.Endpoint != "" && checkEndpoint(c.Endpoint) != nil {
			t.Fatalf("accepted endpoint %q", c.Endpoint)
		}
		back, err := ParseURL(mustURL(t, c.String()))
		if err != nil || back != c {
			t.Fatalf("%q: round trip through %q = %+v, %v; want %+v", raw, c.String(), back, err, c)
		}
	})
}
