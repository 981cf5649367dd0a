package azstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/ckgate/ckgate/gateway"
)

// Scheme is the URL scheme of this backend.
const Scheme = "az"

// Credential methods (the auth= URL parameter).
const (
	AuthAuto             = "auto"
	AuthConnectionString = "connection-string"
	AuthKey              = "key"
	AuthSAS              = "sas"
	AuthIdentity         = "identity"
	AuthAnonymous        = "anonymous"
)

// Environment variables read by Open.
const (
	EnvConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	EnvKey              = "AZURE_STORAGE_KEY"
	EnvSASToken         = "AZURE_STORAGE_SAS_TOKEN"
)

// Config is a parsed az:// URL.
type Config struct {
	Account   string
	Container string
	Prefix    string // "" or a valid key, without a trailing '/'
	Endpoint  string // service URL override; "" for the default
	Auth      string // one of the Auth* methods; "" means auto
}

// String returns the URL of c (it holds no secrets).
func (c Config) String() string {
	u := url.URL{Scheme: Scheme, Host: c.Account, Path: "/" + c.Container}
	if c.Prefix != "" {
		u.Path += "/" + c.Prefix
	}
	q := url.Values{}
	if c.Endpoint != "" {
		q.Set("endpoint", c.Endpoint)
	}
	if c.Auth != "" && c.Auth != AuthAuto {
		q.Set("auth", c.Auth)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// ParseURL parses az://ACCOUNT/CONTAINER[/PREFIX][?endpoint=URL&auth=METHOD].
// Unknown parameters are refused, and so is any secret in the URL.
func ParseURL(u *url.URL) (Config, error) {
	// Messages name the URL redacted, and never quote a parameter's
	// value: it may hold a secret.
	shown := gateway.Redact(u.String())
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w: azure store URL %q: %s", gateway.ErrInvalidURL, shown, fmt.Sprintf(format, args...))
	}
	if !strings.EqualFold(u.Scheme, Scheme) {
		return bad("scheme is not %s://", Scheme)
	}
	if u.User != nil {
		return bad("user info is not allowed (credentials come from the environment)")
	}
	if u.Opaque != "" {
		return bad("want az://ACCOUNT/CONTAINER/PREFIX")
	}
	if u.Fragment != "" || u.RawFragment != "" {
		return bad("a fragment is not allowed")
	}
	var c Config
	c.Account = u.Host
	if err := checkAccount(c.Account); err != nil {
		return bad("%v", err)
	}
	rest := strings.TrimPrefix(u.Path, "/")
	c.Container, c.Prefix, _ = strings.Cut(rest, "/")
	if err := checkContainer(c.Container); err != nil {
		return bad("%v", err)
	}
	c.Prefix = strings.TrimSuffix(c.Prefix, "/")
	if c.Prefix != "" {
		if err := gateway.ValidateKey("open", c.Prefix); err != nil {
			var ge *gateway.Error
			if errors.As(err, &ge) && ge.Err != nil {
				err = ge.Err
			}
			return bad("prefix %q: %v", c.Prefix, err)
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return bad("query: %v", err)
	}
	for name, vals := range q {
		if len(vals) != 1 && (name == "endpoint" || name == "auth") {
			return bad("parameter %q given %d times", name, len(vals))
		}
		v := vals[0]
		switch name {
		case "endpoint":
			if err := checkEndpoint(v); err != nil {
				return bad("endpoint: %v", err)
			}
			c.Endpoint = strings.TrimRight(v, "/")
		case "auth":
			switch v {
			case AuthAuto, AuthConnectionString, AuthKey, AuthSAS, AuthIdentity, AuthAnonymous:
				c.Auth = v
			default:
				return bad("unknown auth method: want one of auto, connection-string, key, sas, identity, anonymous")
			}
		default:
			if looksSecret(name) {
				return bad("a query parameter looks like a secret: pass credentials in %s, %s or %s", EnvConnectionString, EnvKey, EnvSASToken)
			}
			if !plainName(name) {
				return bad("unknown parameter (known: endpoint, auth)")
			}
			return bad("unknown parameter %q (known: endpoint, auth)", name)
		}
	}
	if c.Auth == AuthAuto {
		c.Auth = ""
	}
	return c, nil
}

// plainName reports whether a parameter name may be quoted in a message
// (a short identifier, not a pasted token).
func plainName(name string) bool {
	if name == "" || len(name) > 24 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// looksSecret reports whether a query parameter name is a SAS field or
// sounds like a secret.
func looksSecret(name string) bool {
	name = strings.ToLower(name)
	switch name {
	case "sv", "ss", "srt", "sp", "se", "st", "spr", "sr", "sip", "ses":
		return true
	}
	for _, s := range []string{"sig", "secret", "key", "token", "password", "sas", "credential", "connection"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

func checkAccount(a string) error {
	if len(a) < 3 || len(a) > 24 {
		return fmt.Errorf("account %q: want 3 to 24 lowercase letters and digits", a)
	}
	for _, r := range a {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return fmt.Errorf("account %q: want 3 to 24 lowercase letters and digits", a)
		}
	}
	return nil
}

func checkContainer(c string) error {
	if c == "" {
		return errors.New("no container: want az://ACCOUNT/CONTAINER/PREFIX")
	}
	if c == "$root" || c == "$web" || c == "$logs" {
		return nil
	}
	msg := fmt.Errorf("container %q: want 3 to 63 lowercase letters, digits and single hyphens, starting and ending with a letter or digit", c)
	if len(c) < 3 || len(c) > 63 || c[0] == '-' || c[len(c)-1] == '-' || strings.Contains(c, "--") {
		return msg
	}
	for _, r := range c {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return msg
		}
	}
	return nil
}

func checkEndpoint(v string) error {
	e, err := url.Parse(v)
	switch {
	case err != nil:
		return errors.New("not a URL")
	case e.Scheme != "http" && e.Scheme != "https":
		return fmt.Errorf("scheme %q: want http or https", e.Scheme)
	case e.Host == "":
		return errors.New("no host")
	case e.User != nil:
		return errors.New("user info is not allowed")
	case e.RawQuery != "" || e.ForceQuery:
		return fmt.Errorf("a query is not allowed (put a SAS token in %s)", EnvSASToken)
	case e.Fragment != "":
		return errors.New("a fragment is not allowed")
	}
	return nil
}

// plan is a chosen credential method with what it needs. Its secrets are
// never printed: String omits them.
type plan struct {
	method     string
	serviceURL string // without a trailing '/'
	account    string
	key        string // shared key
	sas        string // SAS token without '?'
}

func (p plan) String() string {
	return fmt.Sprintf("auth=%s service=%s account=%s", p.method, p.serviceURL, p.account)
}

func (p plan) GoString() string { return p.String() }

// choose picks the credential method for c from the environment.
func choose(c Config, getenv func(string) string) (plan, error) {
	p := plan{method: c.Auth, account: c.Account, serviceURL: c.Endpoint}
	if p.serviceURL == "" {
		p.serviceURL = "https://" + c.Account + ".blob.core.windows.net"
	}
	cs, key, sas := getenv(EnvConnectionString), getenv(EnvKey), getenv(EnvSASToken)
	if p.method == "" {
		switch {
		case cs != "":
			p.method = AuthConnectionString
		case key != "":
			p.method = AuthKey
		case sas != "":
			p.method = AuthSAS
		default:
			p.method = AuthIdentity
		}
	}
	switch p.method {
	case AuthConnectionString:
		if cs == "" {
			return plan{}, fmt.Errorf("auth=%s: %s is not set", p.method, EnvConnectionString)
		}
		pc, err := parseConnectionString(cs)
		if err != nil {
			return plan{}, fmt.Errorf("%s: %w", EnvConnectionString, err)
		}
		if pc.account != "" && pc.account != c.Account {
			return plan{}, fmt.Errorf("%s is for account %q, the URL names %q", EnvConnectionString, pc.account, c.Account)
		}
		if c.Endpoint == "" && pc.serviceURL != "" {
			p.serviceURL = pc.serviceURL
		}
		p.key, p.sas = pc.key, pc.sas
	case AuthKey:
		if key == "" {
			return plan{}, fmt.Errorf("auth=%s: %s is not set", p.method, EnvKey)
		}
		p.key = key
	case AuthSAS:
		if sas == "" {
			return plan{}, fmt.Errorf("auth=%s: %s is not set", p.method, EnvSASToken)
		}
		p.sas = strings.TrimPrefix(sas, "?")
	}
	return p, nil
}

// connString is what a storage connection string gives.
type connString struct {
	account    string
	key        string
	sas        string
	serviceURL string
}

// Emulator defaults of UseDevelopmentStorage=true (Azurite's well-known
// account, published by Microsoft; not a secret).
const (
	devAccount  = "devstoreaccount1"
	devKey      = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	devEndpoint = "http://127.0.0.1:10000/devstoreaccount1"
)

// parseConnectionString reads the fields of an Azure Storage connection
// string. Its errors never quote the string.
func parseConnectionString(s string) (connString, error) {
	f := map[string]string{}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return connString{}, errors.New("malformed connection string (want Name=value pairs separated by ';')")
		}
		f[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	var c connString
	if strings.EqualFold(f["usedevelopmentstorage"], "true") {
		c = connString{account: devAccount, key: devKey, serviceURL: devEndpoint}
	}
	if v := f["accountname"]; v != "" {
		c.account = v
	}
	if v := f["accountkey"]; v != "" {
		c.key = v
	}
	if v := f["sharedaccesssignature"]; v != "" {
		c.sas = strings.TrimPrefix(v, "?")
	}
	switch {
	case f["blobendpoint"] != "":
		if err := checkEndpoint(f["blobendpoint"]); err != nil {
			return connString{}, fmt.Errorf("BlobEndpoint: %w", err)
		}
		c.serviceURL = strings.TrimRight(f["blobendpoint"], "/")
	case c.serviceURL == "" && c.account != "":
		proto := f["defaultendpointsprotocol"]
		if proto == "" {
			proto = "https"
		}
		if proto != "http" && proto != "https" {
			return connString{}, fmt.Errorf("DefaultEndpointsProtocol %q: want http or https", proto)
		}
		suffix := f["endpointsuffix"]
		if suffix == "" {
			suffix = "core.windows.net"
		}
		c.serviceURL = proto + "://" + c.account + ".blob." + suffix
	}
	if c.serviceURL == "" {
		return connString{}, errors.New("connection string names neither AccountName nor BlobEndpoint")
	}
	if c.key != "" && c.account == "" {
		return connString{}, errors.New("connection string has AccountKey but no AccountName")
	}
	return c, nil
}

// Open opens the store named by u (see the package documentation), reading
// credentials from the environment. It makes no request.
func Open(ctx context.Context, u *url.URL) (gateway.Store, error) {
	return open(ctx, u, os.Getenv, ClientOptions())
}

func open(ctx context.Context, u *url.URL, getenv func(string) string, opts *container.ClientOptions) (*Store, error) {
	opts = withTryTimeout(ctx, opts)
	c, err := ParseURL(u)
	if err != nil {
		return nil, err
	}
	p, err := choose(c, getenv)
	if err != nil {
		return nil, fmt.Errorf("azure store %s: %w", c, err)
	}
	client, err := p.client(c.Container, opts)
	if err != nil {
		return nil, fmt.Errorf("azure store %s: %s: %s", c, p.method, gateway.Redact(err.Error()))
	}
	s := New(client, c.Prefix)
	s.d.auth = p.method
	return s, nil
}

// client builds the container client of p.
func (p plan) client(containerName string, opts *container.ClientOptions) (*container.Client, error) {
	curl := p.serviceURL + "/" + url.PathEscape(containerName)
	switch p.method {
	case AuthConnectionString, AuthKey:
		if p.key != "" {
			cred, err := container.NewSharedKeyCredential(p.account, p.key)
			if err != nil {
				return nil, errors.New("the account key is not valid base64")
			}
			return container.NewClientWithSharedKeyCredential(curl, cred, opts)
		}
		if p.sas != "" {
			return container.NewClientWithNoCredential(curl+"?"+p.sas, opts)
		}
		return container.NewClientWithNoCredential(curl, opts)
	case AuthSAS:
		return container.NewClientWithNoCredential(curl+"?"+p.sas, opts)
	case AuthAnonymous:
		return container.NewClientWithNoCredential(curl, opts)
	case AuthIdentity:
		if !strings.HasPrefix(p.serviceURL, "https://") {
			return nil, errors.New("a token credential needs an https endpoint")
		}
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, err
		}
		return container.NewClient(curl, tokenCredential{cred}, opts)
	}
	return nil, fmt.Errorf("unknown auth method %q", p.method)
}

// tokenCredential marks token failures as credential errors (ErrPermission)
// so that they are told apart from network failures of the request.
type tokenCredential struct{ cred azcore.TokenCredential }

func (t tokenCredential) GetToken(ctx context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	tok, err := t.cred.GetToken(ctx, o)
	if err != nil && ctx.Err() == nil {
		err = &credentialError{err: err}
	}
	return tok, err
}
