package validate_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/validate"
)

// TestAccessKeyIDMasked: validate-access shows an access key id with at
// most its last 4 characters, in every format and every message: as the
// principal, in the credentials and identity results, and where an
// --expect-principal naming the key id is echoed.
func TestAccessKeyIDMasked(t *testing.T) {
	k := kindNamed(t, "s3")
	raw := k.newURL(t)
	for _, tc := range []struct {
		name string
		key  string
		opts validate.Options
	}{
		{"environment", s3emu.AccessKey, validate.Options{}},
		{"expected", s3emu.AccessKey, validate.Options{ExpectPrincipal: s3emu.AccessKey}},
		{"unexpected", s3emu.AccessKey, validate.Options{ExpectPrincipal: "arn:aws:iam::000000000000:user/other"}},
		{"profile", s3second.AccessKey, validate.Options{Identity: validate.Identity{AWSProfile: "second"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, raw, tc.opts)
			masked := gateway.MaskID(tc.key)
			if rep.Principal != masked {
				t.Errorf("principal %q, want %q", rep.Principal, masked)
			}
			var all bytes.Buffer
			for _, f := range []string{"table", "json", "junit"} {
				if err := validate.WriteReport(&all, rep, f); err != nil {
					t.Fatal(err)
				}
			}
			out := all.String()
			if !strings.Contains(out, masked) {
				t.Errorf("the reports never name the key as %s:\n%s", masked, out)
			}
			for i := 0; i+5 <= len(tc.key); i++ {
				if part := tc.key[i : i+5]; strings.Contains(out, part) {
					t.Fatalf("the reports show %q of the access key id (more than its last 4 characters):\n%s", part, out)
				}
			}
		})
	}
}
