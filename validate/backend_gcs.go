package validate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/compute/metadata"
	"cloud.google.com/go/storage"
	"google.golang.org/api/impersonate"
	"google.golang.org/api/option"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/gcsstore"
)

// openGCS opens a gs:// store with the GCS flags applied as the URL's own
// credentials_file and impersonate parameters.
func openGCS(ctx context.Context, u *url.URL, id Identity, red *redactor) (*backend, error) {
	q := newParams(u)
	if id.GCSCredentialsFile != os.Getenv("GOOGLE_APPLICATION_CREDENTIALS") {
		if err := q.set("credentials_file", id.GCSCredentialsFile, "--gcs-credentials-file"); err != nil {
			return nil, err
		}
	}
	if err := q.set("impersonate", id.GCSImpersonate, "--gcs-impersonate"); err != nil {
		return nil, err
	}
	c := q.apply(u)
	cfg, err := gcsstore.ParseURL(&c)
	if err != nil {
		return nil, usagef("%w", err)
	}
	b := &backend{shown: gateway.Redact(c.String()), red: red}
	t := &gcsTarget{cfg: cfg, emulator: os.Getenv(gcsstore.EmulatorHostEnv)}
	b.endpoint = t.endpointURL()
	opts, err := cfg.ClientOptions(ctx)
	if err != nil {
		return failedOpen(b, err), nil
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return failedOpen(b, err), nil
	}
	t.client = client
	b.store = gcsstore.New(client, cfg.Bucket, cfg.Prefix)
	b.closers = append(b.closers, client.Close)
	b.credentials = t.credentials
	b.identify = t.identify
	b.container = t.bucketAttrs
	b.info = []infoProbe{{OpVersioning, t.versioning}, {OpSoftDelete, t.softDelete}, {OpObjectLock, t.objectLock}}
	return b, nil
}

type gcsTarget struct {
	cfg      gcsstore.Config
	emulator string
	client   *storage.Client

	// set by credentials, read by identify
	file  credFile
	token string
	// set by bucketAttrs, read by the info probes
	attrs *storage.BucketAttrs
}

// credFile is what a JSON credentials file says about who it is.
type credFile struct {
	path           string
	Type           string `json:"type"`
	ClientEmail    string `json:"client_email"`
	ImpersonateURL string `json:"service_account_impersonation_url"`
}

func (f credFile) impersonated() string {
	// .../serviceAccounts/EMAIL:generateAccessToken
	_, rest, ok := strings.Cut(f.ImpersonateURL, "/serviceAccounts/")
	if !ok {
		return ""
	}
	email, _, _ := strings.Cut(rest, ":")
	return email
}

func (t *gcsTarget) endpointURL() *url.URL {
	switch {
	case t.emulator != "":
		h := t.emulator
		if !strings.Contains(h, "://") {
			h = "http://" + h
		}
		if u, err := url.Parse(h); err == nil {
			return u
		}
	case t.cfg.Endpoint != "":
		if u, err := url.Parse(t.cfg.Endpoint); err == nil {
			return u
		}
	}
	return &url.URL{Scheme: "https", Host: "storage.googleapis.com"}
}

func (t *gcsTarget) credentials(ctx context.Context) outcome {
	switch {
	case t.emulator != "":
		return passf("none: " + gcsstore.EmulatorHostEnv + "=" + t.emulator + " (the emulator takes requests without credentials)")
	case t.cfg.Anonymous:
		return passf("anonymous (anonymous=true)")
	}
	src := ""
	switch {
	case t.cfg.CredentialsFile != "":
		t.file.path, src = t.cfg.CredentialsFile, "credentials file "+t.cfg.CredentialsFile
	case os.Getenv("GOOGLE_APPLICATION_CREDENTIALS") != "":
		t.file.path = os.Getenv("GOOGLE_APPLICATION_CREDENTIALS")
		src = "GOOGLE_APPLICATION_CREDENTIALS=" + t.file.path
	default:
		if p := wellKnownADC(); p != "" {
			t.file.path, src = p, "gcloud application default credentials "+p
		}
	}
	if t.file.path != "" {
		b, err := gateway.ReadRegularFile(t.file.path, 0)
		if err != nil {
			return failErr("cannot read the credentials file", err)
		}
		if err := json.Unmarshal(b, &t.file); err != nil {
			return failErr("the credentials file "+t.file.path+" is not JSON", err)
		}
		src += " (" + t.file.Type + ")"
	} else if metadata.OnGCEWithContext(ctx) {
		src = "the metadata server (the instance's or the workload's service account)"
	}
	var tok string
	if t.cfg.Impersonate != "" {
		var base []option.ClientOption
		if t.cfg.CredentialsFile != "" {
			base = append(base, option.WithAuthCredentialsFile(option.CredentialsType(t.file.Type), t.cfg.CredentialsFile))
		}
		ts, err := impersonate.CredentialsTokenSource(ctx, impersonate.CredentialsConfig{
			TargetPrincipal: t.cfg.Impersonate, Delegates: t.cfg.Delegates, Scopes: []string{storage.ScopeFullControl},
		}, base...)
		if err == nil {
			ot, terr := ts.Token()
			if terr != nil {
				err = terr
			} else {
				tok = ot.AccessToken
			}
		}
		if err != nil {
			return failErr("cannot impersonate "+t.cfg.Impersonate+" with "+orNone(src), err)
		}
		src = "impersonated " + t.cfg.Impersonate + " through " + orNone(src)
	} else {
		creds, err := credentials.DetectDefault(&credentials.DetectOptions{
			Scopes: []string{storage.ScopeFullControl}, CredentialsFile: t.cfg.CredentialsFile,
		})
		if err != nil {
			return failErr("no application default credentials", err)
		}
		tk, err := creds.Token(ctx)
		if err != nil {
			return failErr("no token from "+orNone(src), err)
		}
		tok = tk.Value
	}
	t.token = tok
	return passf(src)
}

func orNone(s string) string {
	if s == "" {
		return "application default credentials"
	}
	return s
}

func wellKnownADC() string {
	dir := os.Getenv("CLOUDSDK_CONFIG")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config", "gcloud")
	}
	p := filepath.Join(dir, "application_default_credentials.json")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

func (t *gcsTarget) identify(ctx context.Context) identity {
	ctx, cancel := context.WithTimeout(ctx, identityTimeout)
	defer cancel()
	found := func(email, how string) identity {
		return identity{principal: email, outcome: passf(email + " (" + how + ")")}
	}
	switch {
	case t.emulator != "" || t.cfg.Anonymous:
		return identity{principal: "anonymous", outcome: outcome{status: Unknown,
			message: "requests carry no credentials, so the store sees no principal"}}
	case t.cfg.Impersonate != "":
		return found(t.cfg.Impersonate, "impersonated service account")
	case t.file.ClientEmail != "":
		return found(t.file.ClientEmail, "service account of the credentials file")
	case t.file.impersonated() != "":
		return found(t.file.impersonated(), "service account the credentials file impersonates")
	case t.file.path == "" && metadata.OnGCEWithContext(ctx):
		email, err := metadata.EmailWithContext(ctx, "default")
		if err == nil {
			return found(email, "metadata server")
		}
		return identity{outcome: unknownErr("the metadata server did not name the service account", err)}
	}
	email, err := tokenEmail(ctx, t.token)
	if err != nil {
		return identity{outcome: unknownErr("could not look up the token's account", err)}
	}
	return found(email, "token info")
}

// tokenEmail asks Google's token info endpoint whose access token tok is.
func tokenEmail(ctx context.Context, tok string) (string, error) {
	if tok == "" {
		return "", errors.New("no access token")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://oauth2.googleapis.com/tokeninfo",
		strings.NewReader(url.Values{"access_token": {tok}}.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var info struct {
		Email string `json:"email"`
		Error string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return "", fmt.Errorf("token info: %s: %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK || info.Email == "" {
		return "", fmt.Errorf("token info: %s: no email (%s)", resp.Status, info.Error)
	}
	return info.Email, nil
}

// gcsKind classifies an error of a bucket-level request.
func gcsKind(err error) error {
	if errors.Is(err, storage.ErrBucketNotExist) {
		return gateway.ErrNotFound
	}
	return containerKind(err, nil)
}

func (t *gcsTarget) bucketAttrs(ctx context.Context) outcome {
	attrs, err := t.client.Bucket(t.cfg.Bucket).Attrs(ctx)
	if err == nil {
		t.attrs = attrs
		return passf("bucket " + t.cfg.Bucket + " exists")
	}
	kind := gcsKind(err)
	err = gateway.E("bucket-attrs", t.cfg.Bucket, kind, err)
	switch kind {
	case gateway.ErrNotFound:
		return failErr("bucket "+t.cfg.Bucket+" does not exist", err)
	case gateway.ErrPermission:
		return unknownErr("cannot tell whether bucket "+t.cfg.Bucket+" exists (needs storage.buckets.get, which roles/storage.objectUser lacks)", err)
	}
	return failErr("", err)
}

var errNoAttrs = errors.New("the bucket's metadata could not be read (see container/exists)")

func (t *gcsTarget) versioning(context.Context) outcome {
	if t.attrs == nil {
		return unknownErr("", errNoAttrs)
	}
	if t.attrs.VersioningEnabled {
		return passf("object versioning enabled: overwritten and deleted files stay as noncurrent versions")
	}
	return passf("object versioning disabled")
}

func (t *gcsTarget) softDelete(context.Context) outcome {
	if t.attrs == nil {
		return unknownErr("", errNoAttrs)
	}
	if p := t.attrs.SoftDeletePolicy; p != nil && p.RetentionDuration > 0 {
		return passf("soft delete keeps deleted objects for " + p.RetentionDuration.Round(time.Hour).String())
	}
	return passf("soft delete disabled")
}

func (t *gcsTarget) objectLock(context.Context) outcome {
	if t.attrs == nil {
		return unknownErr("", errNoAttrs)
	}
	var parts []string
	if p := t.attrs.RetentionPolicy; p != nil && p.RetentionPeriod > 0 {
		s := "bucket retention policy of " + p.RetentionPeriod.String()
		if p.IsLocked {
			s += " (locked)"
		}
		parts = append(parts, s+": objects cannot be deleted or overwritten before then, which breaks compare-and-swap of the writer record")
	}
	if t.attrs.ObjectRetentionMode == "Enabled" {
		parts = append(parts, "object retention enabled")
	}
	if len(parts) == 0 {
		return passf("no retention policy or object retention")
	}
	return passf(strings.Join(parts, "; "))
}
