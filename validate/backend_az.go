package validate

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/azstore"
)

// openAzure opens an az:// store. A connection string, a SAS token or
// client/tenant ids given on the command line (different from the
// environment's) select their method; otherwise the store's own order
// applies (connection string, key, SAS, identity).
func openAzure(ctx context.Context, u *url.URL, id Identity, red *redactor) (*backend, error) {
	cfg, err := azstore.ParseURL(u)
	if err != nil {
		return nil, usagef("%w", err)
	}
	var forced []string
	if v := id.AzureConnectionString; v != "" && v != os.Getenv(azstore.EnvConnectionString) {
		forced = append(forced, azstore.AuthConnectionString)
	}
	if v := id.AzureSAS; v != "" && v != os.Getenv(azstore.EnvSASToken) {
		forced = append(forced, azstore.AuthSAS)
	}
	if id.AzureManagedIdentity ||
		(id.AzureClientID != "" && id.AzureClientID != os.Getenv("AZURE_CLIENT_ID")) ||
		(id.AzureTenantID != "" && id.AzureTenantID != os.Getenv("AZURE_TENANT_ID")) {
		forced = append(forced, azstore.AuthIdentity)
	}
	c := *u
	switch {
	case len(forced) > 1:
		return nil, usagef("choose one Azure credential: %s", strings.Join(forced, ", "))
	case len(forced) == 1 && cfg.Auth != "" && cfg.Auth != forced[0]:
		return nil, usagef("the URL says auth=%s but the flags select %s", cfg.Auth, forced[0])
	case len(forced) == 1:
		q := c.Query()
		q.Set("auth", forced[0])
		c.RawQuery = q.Encode()
		cfg.Auth = forced[0]
	}
	getenv := func(name string) string {
		switch {
		case name == azstore.EnvConnectionString && id.AzureConnectionString != "":
			return id.AzureConnectionString
		case name == azstore.EnvSASToken && id.AzureSAS != "":
			return id.AzureSAS
		}
		return os.Getenv(name)
	}
	red.add(getenv(azstore.EnvConnectionString), getenv(azstore.EnvKey), getenv(azstore.EnvSASToken))
	b := &backend{shown: cfg.String(), red: red}
	t := &azTarget{cfg: cfg, getenv: getenv}
	b.endpoint = t.serviceURL()

	st, err := azstore.OpenEnv(ctx, &c, getenv)
	if err != nil {
		return failedOpen(b, err), nil
	}
	t.method = st.Auth()
	if t.method == azstore.AuthIdentity {
		// Our own chain, to tell which source won and whose token it is.
		t.chain = newAzChain(id)
		curl := strings.TrimRight(b.endpoint.String(), "/") + "/" + url.PathEscape(cfg.Container)
		client, err := container.NewClient(curl, t.chain, azstore.ClientOptions())
		if err != nil {
			return failedOpen(b, err), nil
		}
		st = azstore.New(client, cfg.Prefix)
	}
	t.client = st.Client()
	if ep, err := url.Parse(t.client.URL()); err == nil {
		// The service root, without the container or a SAS query.
		b.endpoint = &url.URL{Scheme: ep.Scheme, Host: ep.Host}
	}
	b.store = st
	b.closers = append(b.closers, st.Close)
	b.credentials = t.credentials
	b.identify = t.identify
	b.container = t.properties
	b.info = []infoProbe{{OpObjectLock, t.objectLock}}
	return b, nil
}

type azTarget struct {
	cfg    azstore.Config
	getenv func(string) string
	method string
	chain  *azChain
	client *container.Client

	token string                           // set by credentials (identity method)
	sas   url.Values                       // set by credentials (SAS methods)
	props *container.GetPropertiesResponse // set by properties
}

func (t *azTarget) serviceURL() *url.URL {
	s := t.cfg.Endpoint
	if s == "" {
		s = "https://" + t.cfg.Account + ".blob.core.windows.net"
	}
	u, err := url.Parse(s)
	if err != nil {
		return &url.URL{Scheme: "https", Host: t.cfg.Account + ".blob.core.windows.net"}
	}
	return u
}

// connFields reads the field names and non-secret values of a connection
// string.
func connFields(cs string) map[string]string {
	f := map[string]string{}
	for _, part := range strings.Split(cs, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok {
			f[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	return f
}

func (t *azTarget) credentials(ctx context.Context) outcome {
	switch t.method {
	case azstore.AuthConnectionString:
		f := connFields(t.getenv(azstore.EnvConnectionString))
		account := f["accountname"]
		if strings.EqualFold(f["usedevelopmentstorage"], "true") && account == "" {
			account = azuriteAccount
		}
		msg := "connection string (" + azstore.EnvConnectionString + " or --azure-connection-string), account " + account
		if sas := f["sharedaccesssignature"]; sas != "" {
			return t.describeSAS(msg+", SAS", sas)
		}
		return passf(msg + ", shared key")
	case azstore.AuthKey:
		return passf("shared key of account " + t.cfg.Account + " (" + azstore.EnvKey + ")")
	case azstore.AuthSAS:
		return t.describeSAS("SAS token ("+azstore.EnvSASToken+" or --azure-sas)", t.getenv(azstore.EnvSASToken))
	case azstore.AuthAnonymous:
		return passf("anonymous (auth=anonymous)")
	case azstore.AuthIdentity:
		tok, err := t.chain.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{storageScope}})
		if err != nil {
			return failErr("", err)
		}
		t.token = tok.Token
		return passf("Entra ID token from " + t.chain.won() + ", expires " + tok.ExpiresOn.UTC().Format(time.RFC3339))
	}
	return passf("method " + t.method)
}

const azuriteAccount = "devstoreaccount1"

// describeSAS names a SAS token's grants and fails an expired or not yet
// valid one. The signature is never shown.
func (t *azTarget) describeSAS(what, sas string) outcome {
	q, err := url.ParseQuery(strings.TrimPrefix(sas, "?"))
	if err != nil {
		return failErr(what+" does not parse", errors.New("malformed SAS query"))
	}
	t.sas = q
	var parts []string
	if v := q.Get("sp"); v != "" {
		parts = append(parts, "permissions "+v)
	}
	if v := q.Get("sr"); v != "" {
		parts = append(parts, "resource "+v)
	}
	if v := q.Get("srt"); v != "" {
		parts = append(parts, "account resource types "+v)
	}
	if v := q.Get("si"); v != "" {
		parts = append(parts, "stored policy "+v)
	}
	msg := what
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, ", ")
	}
	now := time.Now()
	if v := q.Get("st"); v != "" {
		if st, err := time.Parse(time.RFC3339, v); err == nil && st.After(now) {
			return outcome{status: Fail, code: "SASNotYetValid", message: msg + ", valid only from " + v}
		}
	}
	if v := q.Get("se"); v != "" {
		se, err := time.Parse(time.RFC3339, v)
		if err == nil && !se.After(now) {
			return outcome{status: Fail, code: "SASExpired", message: msg + ", expired at " + v}
		}
		msg += ", expires " + v
	}
	return passf(msg)
}

func (t *azTarget) identify(ctx context.Context) identity {
	account := t.cfg.Account
	switch t.method {
	case azstore.AuthIdentity:
		c, err := claims(t.token)
		if err != nil {
			return identity{outcome: unknownErr("", err)}
		}
		id := identity{principal: c.OID, aliases: []string{c.AppID, c.AZP, c.UPN, c.UniqueName}}
		msg := "object id " + c.OID
		for _, kv := range [][2]string{{"app id", c.AppID}, {"upn", c.UPN}, {"name", c.UniqueName}, {"tenant", c.TenantID}, {"type", c.IDType}} {
			if kv[1] != "" {
				msg += ", " + kv[0] + " " + kv[1]
			}
		}
		id.outcome = passf(msg)
		return id
	case azstore.AuthAnonymous:
		return identity{principal: "anonymous", outcome: outcome{status: Unknown, message: "requests carry no credentials"}}
	}
	if t.sas != nil {
		return identity{principal: account, outcome: passf("a SAS token of account " + account + ": the store sees whoever holds the token")}
	}
	return identity{principal: account, outcome: passf("the shared key of account " + account + ": it grants everything in the account")}
}

// azKind classifies an error of a container-level request.
func azKind(err error) error { return containerKind(err, nil) }

func (t *azTarget) properties(ctx context.Context) outcome {
	p, err := t.client.GetProperties(ctx, nil)
	if err == nil {
		t.props = &p
		return passf("container " + t.cfg.Container + " exists")
	}
	kind := azKind(err)
	err = gateway.E("container-properties", t.cfg.Container, kind, err)
	switch kind {
	case gateway.ErrNotFound:
		return failErr("container "+t.cfg.Container+" does not exist", err)
	case gateway.ErrPermission:
		return unknownErr("cannot tell whether container "+t.cfg.Container+" exists (reading its properties is refused)", err)
	}
	return failErr("", err)
}

func (t *azTarget) objectLock(context.Context) outcome {
	if t.props == nil {
		return unknownErr("", errors.New("the container's properties could not be read (see container/exists)"))
	}
	var parts []string
	if b := t.props.HasImmutabilityPolicy; b != nil && *b {
		parts = append(parts, "a time-based immutability policy")
	}
	if b := t.props.HasLegalHold; b != nil && *b {
		parts = append(parts, "a legal hold")
	}
	if b := t.props.IsImmutableStorageWithVersioningEnabled; b != nil && *b {
		parts = append(parts, "version-level immutability")
	}
	if len(parts) == 0 {
		return passf("no immutability policy or legal hold on the container")
	}
	return passf("the container has " + strings.Join(parts, ", ") + ": blobs cannot be overwritten or deleted while it applies")
}
