package validate_test

import (
	"strings"
	"testing"

	"github.com/ckgate/ckgate/validate"
)

func TestParseUserSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want validate.UserSpec
	}{
		{"nobody", validate.UserSpec{Name: "nobody"}},
		{"svc-ckpt.job", validate.UserSpec{Name: "svc-ckpt.job"}},
		{"_spark", validate.UserSpec{Name: "_spark"}},
		{"host$", validate.UserSpec{Name: "host$"}},
		{"0", validate.UserSpec{UID: 0}},
		{"1000", validate.UserSpec{UID: 1000}},
		{"1000:100", validate.UserSpec{UID: 1000, GID: 100, HasGID: true}},
		{"4294967294:4294967294", validate.UserSpec{UID: 4294967294, GID: 4294967294, HasGID: true}},
	} {
		got, err := validate.ParseUserSpec(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseUserSpec(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if s := got.String(); s != tc.in {
			t.Errorf("ParseUserSpec(%q).String() = %q", tc.in, s)
		}
	}
	for _, in := range []string{
		"", ":", "1000:", ":100", "-1", "4294967295", "99999999999", "01000", "1000:0100",
		"nobody:100", "1000:users", "a b", "-nobody", "9abc", "$", "x$y", "1000:100:1",
		strings.Repeat("u", 33), "root\x00", "ünï",
	} {
		if got, err := validate.ParseUserSpec(in); err == nil {
			t.Errorf("ParseUserSpec(%q) = %+v, want an error", in, got)
		}
	}
}

func TestResolveUser(t *testing.T) {
	acct, err := validate.UserSpec{Name: "nobody"}.Resolve()
	if err != nil {
		t.Skipf("no user nobody here: %v", err)
	}
	if acct.UID != nobody {
		t.Errorf("nobody: uid %d, want %d", acct.UID, nobody)
	}
	byID, err := validate.UserSpec{UID: acct.UID}.Resolve()
	if err != nil || byID.GID != acct.GID {
		t.Errorf("uid %d: %+v, %v; want gid %d", acct.UID, byID, err, acct.GID)
	}
	// An explicit UID:GID needs no passwd entry (as in a container).
	free, err := validate.UserSpec{UID: 4000000, GID: 4000001, HasGID: true}.Resolve()
	if err != nil || free.UID != 4000000 || free.GID != 4000001 || len(free.Groups) != 0 {
		t.Errorf("4000000:4000001 = %+v, %v", free, err)
	}
	if _, err := (validate.UserSpec{UID: 4000000}).Resolve(); err == nil {
		t.Error("a uid without a passwd entry and without a gid resolved")
	}
}

// FuzzParseUserSpec: no input panics; an accepted spec prints back to
// itself and parses to the same value; ids stay below (uid_t)-1.
func FuzzParseUserSpec(f *testing.F) {
	for _, s := range []string{"nobody", "1000", "1000:100", "0:0", "4294967294", "4294967295", "host$", "-x", "", ":", "01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := validate.ParseUserSpec(s)
		if err != nil {
			if u != (validate.UserSpec{}) {
				t.Fatalf("ParseUserSpec(%q) returned %+v with error %v", s, u, err)
			}
			return
		}
		if u.String() != s {
			t.Fatalf("ParseUserSpec(%q).String() = %q", s, u.String())
		}
		again, err := validate.ParseUserSpec(u.String())
		if err != nil || again != u {
			t.Fatalf("round trip of %q: %+v, %v", s, again, err)
		}
		if u.UID == 1<<32-1 || u.GID == 1<<32-1 {
			t.Fatalf("ParseUserSpec(%q) accepted (uid_t)-1", s)
		}
		if u.Name != "" && (u.UID != 0 || u.HasGID) {
			t.Fatalf("ParseUserSpec(%q) = %+v: a name with ids", s, u)
		}
	})
}
