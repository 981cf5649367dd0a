package validate

import (
	"strings"
)

// Identity selects the credentials the probes use, the way the job's own
// flags or environment do. Empty fields leave the backend's usual chain
// alone (see each backend's package documentation); the CLI fills every
// field from its flag or, when the flag is absent, from the environment
// variable named in the field's comment.
type Identity struct {
	// AWS (s3:// stores).
	AWSProfile              string // AWS_PROFILE
	AWSRoleARN              string // AWS_ROLE_ARN
	AWSRoleSessionName      string // AWS_ROLE_SESSION_NAME
	AWSExternalID           string // CKGATE_AWS_EXTERNAL_ID (AWS defines no variable)
	AWSWebIdentityTokenFile string // AWS_WEB_IDENTITY_TOKEN_FILE

	// Google Cloud Storage (gs:// stores).
	GCSCredentialsFile string // GOOGLE_APPLICATION_CREDENTIALS
	GCSImpersonate     string // CLOUDSDK_AUTH_IMPERSONATE_SERVICE_ACCOUNT

	// Azure Blob Storage (az:// stores). Secrets: never printed.
	AzureConnectionString string // AZURE_STORAGE_CONNECTION_STRING
	AzureSAS              string // AZURE_STORAGE_SAS_TOKEN
	AzureClientID         string // AZURE_CLIENT_ID
	AzureTenantID         string // AZURE_TENANT_ID
	// AzureManagedIdentity uses the managed identity of the host (the
	// user-assigned one named by AzureClientID, if set) and nothing else.
	AzureManagedIdentity bool // CKGATE_AZURE_MANAGED_IDENTITY
}

// identity is who the store sees, as the identity probe found out.
type identity struct {
	outcome
	principal string   // the principal reported
	aliases   []string // other names of the same principal
}

// checkPrincipal turns the identity probe's findings into its outcome,
// failing when an expected principal was given and differs.
func checkPrincipal(id identity, expect string) outcome {
	o := id.outcome
	if expect == "" || o.status == Fail {
		return o
	}
	for _, name := range append([]string{id.principal}, id.aliases...) {
		if name != "" && samePrincipal(name, expect) {
			if o.status == Unknown {
				o.message += "; matches the expected principal " + expect
			}
			return o
		}
	}
	seen := id.principal
	if seen == "" {
		seen = "an unknown principal"
	}
	return outcome{status: Fail, code: "UNEXPECTED_PRINCIPAL",
		message: "the store sees " + seen + ", not the expected " + expect +
			" (" + o.message + ")"}
}

// samePrincipal compares principal names: exactly, except that email
// addresses and GUIDs are case-insensitive.
func samePrincipal(a, b string) bool {
	if a == b {
		return true
	}
	if strings.Contains(a, "@") || isGUID(a) {
		return strings.EqualFold(a, b)
	}
	return false
}

func isGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
	}
	return true
}
