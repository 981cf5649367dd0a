package wiretest

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"google.golang.org/api/option"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/azstore"
	"github.com/ckgate/ckgate/gateway/gcsstore"
	"github.com/ckgate/ckgate/gateway/s3store"
	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/internal/faultproxy"
)

// tryTimeout is the per-try timeout set on every SDK client here (none of
// the SDKs has one by default); the Delay fault holds answers past it.
const tryTimeout = 3 * time.Second

// cloud is one emulator and how to open a store on it through a proxy.
type cloud struct {
	name        string
	err         error // why the emulator is not there
	target      string
	provider    faultproxy.Provider
	rewriteHost bool
	// open makes a new bucket through the proxy at base and returns a
	// store on it.
	open func(t *testing.T, base string) gateway.Store
	// isWrite tells an object write (the request a Put sends) from the rest.
	isWrite func(*http.Request) bool
	// storeURL returns the store URL of a new bucket reached through the
	// proxy at base, with query (extra parameters) added, and sets the
	// environment the URL's opener reads.
	storeURL func(t *testing.T, base, query string) string
}

var (
	clouds   []*cloud
	stopping []func()
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	clouds = []*cloud{s3Cloud(ctx), gcsCloud(ctx), azureCloud(ctx)}
	cancel()
	code := m.Run()
	for _, stop := range stopping {
		stop()
	}
	os.Exit(code)
}

func unique(prefix string) string { return prefix + strings.ToLower(rand.Text()[:12]) }

func s3Cloud(ctx context.Context) *cloud {
	c := &cloud{name: "s3", provider: faultproxy.S3}
	emu, err := emulator.StartVersitygw(ctx)
	if err != nil {
		c.err = err
		return c
	}
	stopping = append(stopping, emu.Stop)
	c.target = emu.Endpoint
	c.isWrite = func(r *http.Request) bool {
		q := r.URL.Query()
		return r.Method == http.MethodPut && strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 1 &&
			!q.Has("uploadId") && !q.Has("partNumber")
	}
	c.open = func(t *testing.T, base string) gateway.Store {
		client := s3.New(s3.Options{
			Region:       emu.Region,
			BaseEndpoint: aws.String(base),
			UsePathStyle: true,
			Credentials:  credentials.NewStaticCredentialsProvider(emu.AccessKey, emu.SecretKey, ""),
			HTTPClient:   &http.Client{Timeout: tryTimeout},
		})
		return made(t, s3store.New(client, unique("ckgate-"), ""))
	}
	c.storeURL = func(t *testing.T, base, query string) string {
		emu.SetEnv(t)
		return "s3://" + unique("ckgate-") + "?" + url.Values{"endpoint": {base}, "path_style": {"true"}, "region": {emu.Region}}.Encode() + "&" + query
	}
	return c
}

func gcsCloud(ctx context.Context) *cloud {
	c := &cloud{name: "gcs", provider: faultproxy.GCS, rewriteHost: true}
	emu, err := emulator.StartFakeGCS(ctx)
	if err != nil {
		c.err = err
		return c
	}
	stopping = append(stopping, emu.Stop)
	c.target = "http://" + emu.Host
	c.isWrite = func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/upload/")
	}
	c.open = func(t *testing.T, base string) gateway.Store {
		t.Setenv(gcsstore.EmulatorHostEnv, strings.TrimPrefix(base, "http://"))
		client, err := storage.NewClient(t.Context(), option.WithHTTPClient(&http.Client{Timeout: tryTimeout}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		return made(t, gcsstore.New(client, unique("ckgate-"), "", gcsstore.WithProject("ckgate-test")))
	}
	c.storeURL = func(t *testing.T, base, query string) string {
		t.Setenv(gcsstore.EmulatorHostEnv, strings.TrimPrefix(base, "http://"))
		return "gs://" + unique("ckgate-") + "?project=ckgate-test&" + query
	}
	return c
}

func azureCloud(ctx context.Context) *cloud {
	c := &cloud{name: "azure", provider: faultproxy.Azure}
	emu, err := emulator.StartAzurite(ctx)
	if err != nil {
		c.err = err
		return c
	}
	stopping = append(stopping, emu.Stop)
	c.target = strings.TrimSuffix(emu.ServiceURL, "/"+emu.Account)
	c.isWrite = func(r *http.Request) bool {
		q := r.URL.Query()
		return r.Method == http.MethodPut && q.Get("restype") == "" && (q.Get("comp") == "" || q.Get("comp") == "blocklist")
	}
	c.open = func(t *testing.T, base string) gateway.Store {
		cred, err := container.NewSharedKeyCredential(emu.Account, emu.Key)
		if err != nil {
			t.Fatal(err)
		}
		opts := azstore.ClientOptions()
		opts.Retry.TryTimeout = tryTimeout
		client, err := container.NewClientWithSharedKeyCredential(base+"/"+emu.Account+"/"+unique("ckgate"), cred, opts)
		if err != nil {
			t.Fatal(err)
		}
		return made(t, azstore.New(client, ""))
	}
	c.storeURL = func(t *testing.T, base, query string) string {
		t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "")
		t.Setenv("AZURE_STORAGE_SAS_TOKEN", "")
		t.Setenv("AZURE_STORAGE_KEY", emu.Key)
		return "az://" + emu.Account + "/" + unique("ckgate") + "?" + url.Values{"endpoint": {base + "/" + emu.Account}}.Encode() + "&" + query
	}
	return c
}

func made(t *testing.T, st gateway.Store) gateway.Store {
	t.Helper()
	if err := gateway.MakeBucket(t.Context(), st); err != nil {
		t.Fatalf("make bucket: %v", err)
	}
	t.Cleanup(func() { gateway.Close(st) })
	return st
}

// through starts a fault proxy in front of c's emulator (no rules yet) and
// opens a store on a new bucket through it.
func (c *cloud) through(t *testing.T, seed uint64) (gateway.Store, *faultproxy.Proxy) {
	t.Helper()
	p, err := faultproxy.Start(faultproxy.Options{Target: c.target, Provider: c.provider, RewriteHost: c.rewriteHost, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tally.requests(t, p.Requests())
		p.Close()
	})
	return c.open(t, p.URL()), p
}

// each runs f on every cloud; a missing emulator fails under CI.
func each(t *testing.T, f func(t *testing.T, c *cloud)) {
	for _, c := range clouds {
		t.Run(c.name, func(t *testing.T) {
			emulator.Require(t, c.err)
			f(t, c)
		})
	}
}
