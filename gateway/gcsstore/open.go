package gcsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/impersonate"
	"google.golang.org/api/option"

	"github.com/ckgate/ckgate/gateway"
)

// Scheme is the URL scheme of this backend.
const Scheme = "gs"

// EmulatorHostEnv is the environment variable that points the client
// library at an emulator.
const EmulatorHostEnv = "STORAGE_EMULATOR_HOST"

// Config is what a gs:// URL says.
type Config struct {
	Bucket          string
	Prefix          string // "" or ending in '/'
	Project         string
	CredentialsFile string
	Impersonate     string
	Delegates       []string
	Endpoint        string
	Anonymous       bool
}

var knownParams = map[string]bool{
	"project": true, "credentials_file": true, "impersonate": true,
	"delegates": true, "endpoint": true, "anonymous": true,
}

// ParseURL reads a gs://BUCKET[/PREFIX][?PARAMS] URL (see the package doc).
// It does no I/O.
func ParseURL(u *url.URL) (Config, error) {
	var cfg Config
	if u == nil {
		return cfg, fmt.Errorf("%w: gs URL: nil", gateway.ErrInvalidURL)
	}
	fail := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w: gs URL %q: %s", gateway.ErrInvalidURL, gateway.Redact(u.String()), fmt.Sprintf(format, args...))
	}
	switch {
	case !strings.EqualFold(u.Scheme, Scheme):
		return fail("scheme %q is not %q", u.Scheme, Scheme)
	case u.Opaque != "":
		return fail("want gs://BUCKET[/PREFIX]")
	case u.User != nil:
		return fail("user information is not allowed; use credentials_file= or application default credentials")
	case u.Fragment != "" || u.RawFragment != "":
		return fail("a fragment is not allowed")
	}
	if err := validBucket(u.Host); err != nil {
		return fail("%v", err)
	}
	cfg.Bucket = u.Host
	if p := strings.Trim(u.Path, "/"); p != "" {
		if err := gateway.ValidateKey("open", p); err != nil {
			var ge *gateway.Error
			if errors.As(err, &ge) && ge.Err != nil {
				err = ge.Err
			}
			return fail("prefix %q: %v", p, err)
		}
		if strings.ContainsAny(p, "\r\n") {
			return fail("prefix: GCS object names cannot contain CR or LF")
		}
		if len(p)+1 >= maxObjectName {
			return fail("prefix longer than %d bytes leaves no room for keys", maxObjectName-2)
		}
		cfg.Prefix = p + "/"
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fail("query: %v", err)
	}
	for name, vals := range q {
		if !knownParams[name] {
			return fail("unknown parameter %q (known: anonymous, credentials_file, delegates, endpoint, impersonate, project)", name)
		}
		if len(vals) != 1 {
			return fail("parameter %q given %d times", name, len(vals))
		}
		if vals[0] == "" {
			return fail("parameter %q is empty", name)
		}
	}
	cfg.Project = q.Get("project")
	cfg.CredentialsFile = q.Get("credentials_file")
	cfg.Impersonate = q.Get("impersonate")
	cfg.Endpoint = q.Get("endpoint")
	if v := q.Get("anonymous"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fail("anonymous=%q is not a boolean", v)
		}
		cfg.Anonymous = b
	}
	if v := q.Get("delegates"); v != "" {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); !strings.Contains(d, "@") {
				return fail("delegates: %q is no service account email", d)
			}
			cfg.Delegates = append(cfg.Delegates, strings.TrimSpace(d))
		}
	}
	if cfg.Impersonate != "" && !strings.Contains(cfg.Impersonate, "@") {
		return fail("impersonate: %q is no service account email", cfg.Impersonate)
	}
	if len(cfg.Delegates) > 0 && cfg.Impersonate == "" {
		return fail("delegates needs impersonate")
	}
	if cfg.Anonymous && (cfg.CredentialsFile != "" || cfg.Impersonate != "") {
		return fail("anonymous=true excludes credentials_file and impersonate")
	}
	if cfg.Endpoint != "" {
		e, err := url.Parse(cfg.Endpoint)
		if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" || e.User != nil {
			return fail("endpoint %q is no http(s) URL", cfg.Endpoint)
		}
	}
	return cfg, nil
}

// validBucket checks GCS bucket naming rules: 3 to 63 characters (222 with
// dots, 63 per dot-separated part) of lowercase letters, digits, '-', '_'
// and '.', starting and ending with a letter or digit, not starting with
// "goog".
func validBucket(b string) error {
	if b == "" {
		return errors.New("no bucket; want gs://BUCKET[/PREFIX]")
	}
	if len(b) < 3 || len(b) > 222 || (!strings.Contains(b, ".") && len(b) > 63) {
		return fmt.Errorf("bucket %q: names have 3 to 63 characters (222 with dots)", b)
	}
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.') {
			return fmt.Errorf("bucket %q: only lowercase letters, digits, '-', '_' and '.' are allowed", b)
		}
	}
	alnum := func(ch byte) bool { return ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' }
	if !alnum(b[0]) || !alnum(b[len(b)-1]) {
		return fmt.Errorf("bucket %q: must start and end with a letter or digit", b)
	}
	for _, part := range strings.Split(b, ".") {
		if part == "" || len(part) > 63 {
			return fmt.Errorf("bucket %q: dot-separated parts have 1 to 63 characters", b)
		}
	}
	if strings.HasPrefix(b, "goog") {
		return fmt.Errorf("bucket %q: names cannot start with \"goog\"", b)
	}
	return nil
}

// clientOptions returns the client options cfg asks for. With
// STORAGE_EMULATOR_HOST set, credentials_file and impersonate are refused.
func (cfg Config) clientOptions(ctx context.Context) ([]option.ClientOption, error) {
	var opts []option.ClientOption
	if cfg.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(cfg.Endpoint))
	}
	if h := os.Getenv(EmulatorHostEnv); h != "" && (cfg.CredentialsFile != "" || cfg.Impersonate != "") {
		return nil, fmt.Errorf("gs://%s: %s=%s talks to an emulator without credentials; credentials_file and impersonate cannot apply",
			cfg.Bucket, EmulatorHostEnv, h)
	}
	if cfg.Anonymous {
		return append(opts, option.WithoutAuthentication()), nil
	}
	var base []option.ClientOption
	if cfg.CredentialsFile != "" {
		typ, err := credentialsType(cfg.CredentialsFile)
		if err != nil {
			return nil, err
		}
		base = append(base, option.WithAuthCredentialsFile(typ, cfg.CredentialsFile))
	}
	if cfg.Impersonate == "" {
		return append(opts, base...), nil
	}
	ts, err := impersonate.CredentialsTokenSource(ctx, impersonate.CredentialsConfig{
		TargetPrincipal: cfg.Impersonate,
		Delegates:       cfg.Delegates,
		Scopes:          []string{storage.ScopeFullControl},
	}, base...)
	if err != nil {
		return nil, fmt.Errorf("gs://%s: impersonate %s: %w", cfg.Bucket, cfg.Impersonate, err)
	}
	return append(opts, option.WithTokenSource(ts)), nil
}

// credentialsType reads the "type" of a JSON credentials file. Errors name
// the file, never its content.
func credentialsType(path string) (option.CredentialsType, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named below, once
		}
		return "", fmt.Errorf("credentials file %q: %w", path, err)
	}
	var f struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(b, &f) != nil {
		return "", fmt.Errorf("credentials file %q: not a JSON credentials file", path)
	}
	switch t := option.CredentialsType(f.Type); t {
	case option.ServiceAccount, option.AuthorizedUser, option.ImpersonatedServiceAccount, option.ExternalAccount:
		return t, nil
	case "":
		return "", fmt.Errorf("credentials file %q: no \"type\" field", path)
	default:
		return "", fmt.Errorf("credentials file %q: unsupported credentials type %q", path, f.Type)
	}
}

// Open opens the store named by a gs:// URL. It makes no request: a
// missing bucket or refused credentials show on the first operation.
func Open(ctx context.Context, u *url.URL) (gateway.Store, error) {
	cfg, err := ParseURL(u)
	if err != nil {
		return nil, err
	}
	opts, err := cfg.ClientOptions(ctx)
	if err != nil {
		return nil, err
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gs URL %q: storage client: %w", gateway.Redact(u.String()), err)
	}
	s := New(client, cfg.Bucket, cfg.Prefix, WithProject(cfg.Project))
	s.d.condCopy = s.d.condCopy && serviceConditions(cfg.Endpoint)
	s.d.owned = true
	return s, nil
}

// MakeBucket creates the bucket (in the WithProject / project= project).
// A bucket that already exists and that this principal can use is success;
// one owned by someone else is ErrPermission.
func (s *driver) MakeBucket(ctx context.Context) error {
	const op = "make-bucket"
	err := s.bucket.Create(ctx, s.project, nil)
	if err == nil {
		return nil
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Code == http.StatusConflict {
		// Already exists: ours ("you already own it") or someone else's.
		if _, aerr := s.bucket.Attrs(ctx); aerr != nil {
			if isNotFound(aerr) {
				return gateway.E(op, s.name, gateway.ErrPermission, fmt.Errorf("bucket name taken by another project: %w", err))
			}
			return wrap(ctx, op, s.name, gateway.None(), fmt.Errorf("bucket exists but is not usable: %w", aerr))
		}
		return nil
	}
	if errors.As(err, &ge) && ge.Code == http.StatusBadRequest && s.project == "" {
		err = fmt.Errorf("%w (no project: set project= in the URL)", err)
	}
	return wrap(ctx, op, s.name, gateway.None(), err)
}
