package validate

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// storageScope is the OAuth scope of Azure Storage's data plane.
const storageScope = "https://storage.azure.com/.default"

// azChain is DefaultAzureCredential's order (environment, workload
// identity, managed identity, Azure CLI) with two differences: it
// remembers which source won, and it takes the client and tenant ids of
// the --azure-client-id / --azure-tenant-id flags.
type azChain struct {
	sources []azSource

	mu     sync.Mutex
	winner *azSource
}

type azSource struct {
	name string
	cred azcore.TokenCredential
	err  error // the constructor's error: the source does not apply
}

func newAzChain(id Identity) *azChain {
	c := &azChain{}
	add := func(name string, cred azcore.TokenCredential, err error) {
		c.sources = append(c.sources, azSource{name: name, cred: cred, err: err})
	}
	clientID, tenantID := id.AzureClientID, id.AzureTenantID
	mi := func() {
		o := &azidentity.ManagedIdentityCredentialOptions{}
		name := "managed identity (system-assigned)"
		if clientID != "" {
			o.ID = azidentity.ClientID(clientID)
			name = "managed identity (user-assigned, client id " + clientID + ")"
		}
		cred, err := azidentity.NewManagedIdentityCredential(o)
		add(name, cred, err)
	}
	if id.AzureManagedIdentity {
		mi()
		return c
	}
	switch secret := os.Getenv("AZURE_CLIENT_SECRET"); {
	case secret != "" && clientID != "" && tenantID != "":
		cred, err := azidentity.NewClientSecretCredential(tenantID, clientID, secret, nil)
		add("service principal secret (AZURE_CLIENT_SECRET, client id "+clientID+")", cred, err)
	case secret != "" || os.Getenv("AZURE_CLIENT_CERTIFICATE_PATH") != "" || os.Getenv("AZURE_USERNAME") != "":
		cred, err := azidentity.NewEnvironmentCredential(nil)
		add("environment (AZURE_CLIENT_ID, AZURE_TENANT_ID and a secret or certificate)", cred, err)
	}
	if os.Getenv("AZURE_FEDERATED_TOKEN_FILE") != "" {
		cred, err := azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{ClientID: clientID, TenantID: tenantID})
		add("workload identity (AZURE_FEDERATED_TOKEN_FILE)", cred, err)
	}
	mi()
	cred, err := azidentity.NewAzureCLICredential(&azidentity.AzureCLICredentialOptions{TenantID: tenantID})
	add("Azure CLI (az login)", cred, err)
	return c
}

// GetToken returns a token of the winning source, finding it first.
func (c *azChain) GetToken(ctx context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.mu.Lock()
	w := c.winner
	c.mu.Unlock()
	if w != nil {
		return w.cred.GetToken(ctx, o)
	}
	var errs []string
	for i := range c.sources {
		s := &c.sources[i]
		if s.err != nil {
			errs = append(errs, s.name+": "+firstLine(s.err.Error()))
			continue
		}
		tok, err := s.cred.GetToken(ctx, o)
		if err == nil {
			c.mu.Lock()
			c.winner = s
			c.mu.Unlock()
			return tok, nil
		}
		errs = append(errs, s.name+": "+firstLine(err.Error()))
		if ctx.Err() != nil {
			break
		}
	}
	return azcore.AccessToken{}, fmt.Errorf("no Azure credential gave a token: %s", strings.Join(errs, "; "))
}

func (c *azChain) won() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.winner == nil {
		return ""
	}
	return c.winner.name
}

// tokenClaims are the claims of an Entra ID access token that name its
// principal.
type tokenClaims struct {
	OID        string `json:"oid"`
	AppID      string `json:"appid"`
	AZP        string `json:"azp"`
	UPN        string `json:"upn"`
	UniqueName string `json:"unique_name"`
	TenantID   string `json:"tid"`
	IDType     string `json:"idtyp"`
}

// claims decodes (without verifying: the token is our own, fresh from the
// identity provider) the payload of a JWT access token.
func claims(token string) (tokenClaims, error) {
	var c tokenClaims
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, errors.New("the access token is not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c, fmt.Errorf("access token payload: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("access token payload: %w", err)
	}
	return c, nil
}
