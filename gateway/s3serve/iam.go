package s3serve

import (
	"github.com/versity/versitygw/auth"
)

// iam is versitygw's account service over the credentials file: read-only.
// Every account has versitygw's admin role, so that versitygw's own ACL
// and bucket-policy checks step aside: ckgate's guard decides every
// mutation in the backend, by the principal behind the access key.
type iam struct{ creds *Credentials }

var _ auth.IAMService = iam{}

func (i iam) GetUserAccount(access string) (auth.Account, error) {
	p, ok := i.creds.Lookup(access)
	if !ok {
		return auth.Account{}, auth.ErrNoSuchUser
	}
	return auth.Account{Access: p.AccessKey, Secret: p.SecretKey, Role: auth.RoleAdmin}, nil
}

func (i iam) CreateAccount(auth.Account) error                  { return errReadOnly }
func (i iam) UpdateUserAccount(string, auth.MutableProps) error { return errReadOnly }
func (i iam) DeleteUserAccount(string) error                    { return errReadOnly }
func (i iam) ListUserAccounts() ([]auth.Account, error)         { return nil, errReadOnly }
func (i iam) Shutdown() error                                   { return nil }

func (i iam) ResolveAccounts(keys []string) ([]string, error) {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if _, ok := i.creds.Lookup(k); ok {
			out = append(out, k)
		}
	}
	return out, nil
}
