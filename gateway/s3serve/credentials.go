package s3serve

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"gopkg.in/yaml.v3"
)

// Principal is one access key of the credentials file and who it is.
type Principal struct {
	AccessKey string `yaml:"access_key"`
	SecretKey string `yaml:"secret_key"`
	// ID is the principal the policies see.
	ID string `yaml:"principal"`
	// Kind is job, retention, housekeeping or admin.
	Kind string `yaml:"kind"`
}

// String never shows the secret.
func (p Principal) String() string { return fmt.Sprintf("%s (%s, key %s)", p.ID, p.Kind, p.AccessKey) }

// Credentials maps access keys to principals.
type Credentials struct {
	Principals []Principal `yaml:"principals"`
	byKey      map[string]Principal
}

// Kinds are the principal kinds a credentials file may name.
var Kinds = []string{"job", "retention", "housekeeping", "admin"}

// maxCredentialsSize bounds what LoadCredentials reads.
const maxCredentialsSize = 1 << 20

// LoadCredentials reads and parses the credentials file at path. A file
// that its group or others may read is refused (it holds secrets), and so
// is anything but a regular file.
func LoadCredentials(path string) (*Credentials, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("credentials file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("credentials file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("credentials file %s: not a regular file (%s)", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("credentials file %s: mode %04o lets group or others read it; chmod 600 it", path, perm)
	}
	if fi.Size() > maxCredentialsSize {
		return nil, fmt.Errorf("credentials file %s: %d bytes, more than %d", path, fi.Size(), maxCredentialsSize)
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil && fi.Size() > 0 {
		return nil, fmt.Errorf("credentials file %s: %w", path, err)
	}
	c, err := ParseCredentials(data)
	if err != nil {
		return nil, fmt.Errorf("credentials file %s: %w", path, err)
	}
	return c, nil
}

// ParseCredentials parses a credentials file's YAML. Errors name the entry
// at fault by its position and access key, never by its secret.
func ParseCredentials(data []byte) (*Credentials, error) {
	var c Credentials
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, errors.New("not valid YAML of the shape principals: [{access_key, secret_key, principal, kind}]")
	}
	if len(c.Principals) == 0 {
		return nil, errors.New("no principals")
	}
	c.byKey = make(map[string]Principal, len(c.Principals))
	for i, p := range c.Principals {
		at := fmt.Sprintf("principals[%d]", i)
		switch {
		case p.AccessKey == "":
			return nil, fmt.Errorf("%s: no access_key", at)
		case p.SecretKey == "":
			return nil, fmt.Errorf("%s (access key %s): no secret_key", at, p.AccessKey)
		case p.ID == "":
			return nil, fmt.Errorf("%s (access key %s): no principal", at, p.AccessKey)
		case !slices.Contains(Kinds, p.Kind):
			return nil, fmt.Errorf("%s (access key %s): kind %q: want one of %v", at, p.AccessKey, p.Kind, Kinds)
		}
		if _, dup := c.byKey[p.AccessKey]; dup {
			return nil, fmt.Errorf("%s: access key %s given twice", at, p.AccessKey)
		}
		c.byKey[p.AccessKey] = p
	}
	return &c, nil
}

// Lookup returns the principal of an access key.
func (c *Credentials) Lookup(accessKey string) (Principal, bool) {
	p, ok := c.byKey[accessKey]
	return p, ok
}
