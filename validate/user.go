package validate

import (
	"errors"
	"fmt"
	"os/user"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// UserSpec is a parsed --as-user value: a user name, or a numeric uid
// with an optional gid.
type UserSpec struct {
	Name   string // set for NAME
	UID    uint32 // set for UID[:GID]
	GID    uint32
	HasGID bool
}

// maxID is the largest uid or gid accepted; 4294967295 is (uid_t)-1,
// which setuid(2) reads as "leave unchanged".
const maxID = 1<<32 - 2

// ParseUserSpec parses NAME or UID[:GID]. A NAME is 1 to 32 characters:
// letters, digits, '_', '.', '-' (not first), and an optional trailing
// '$' (machine accounts); a string of digits only is a UID. It does no
// lookup (see Resolve).
func ParseUserSpec(s string) (UserSpec, error) {
	var u UserSpec
	bad := func(why string) (UserSpec, error) {
		return UserSpec{}, fmt.Errorf("--as-user %q: %s (want NAME or UID[:GID])", s, why)
	}
	if s == "" {
		return bad("empty")
	}
	left, right, hasColon := strings.Cut(s, ":")
	if gateway.AllDigits(left) {
		id, err := parseID(left)
		if err != nil {
			return bad("uid " + err.Error())
		}
		u.UID = id
		if hasColon {
			if !gateway.AllDigits(right) {
				return bad("gid must be a number")
			}
			gid, err := parseID(right)
			if err != nil {
				return bad("gid " + err.Error())
			}
			u.GID, u.HasGID = gid, true
		}
		return u, nil
	}
	if hasColon {
		return bad("a gid goes with a numeric uid only")
	}
	if err := checkName(left); err != nil {
		return bad(err.Error())
	}
	u.Name = left
	return u, nil
}

func parseID(s string) (uint32, error) {
	if len(s) > 1 && s[0] == '0' {
		return 0, errors.New("has a leading zero")
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n > maxID {
		return 0, fmt.Errorf("out of range (0 to %d)", maxID)
	}
	return uint32(n), nil
}

func checkName(s string) error {
	if len(s) > 32 {
		return errors.New("user name longer than 32 characters")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case (c >= '0' && c <= '9' || c == '.' || c == '-') && i > 0:
		case c == '$' && i == len(s)-1 && i > 0:
		default:
			return fmt.Errorf("user name has %q at position %d", c, i+1)
		}
	}
	return nil
}

// String returns the spec in the form ParseUserSpec reads.
func (u UserSpec) String() string {
	if u.Name != "" {
		return u.Name
	}
	s := strconv.FormatUint(uint64(u.UID), 10)
	if u.HasGID {
		s += ":" + strconv.FormatUint(uint64(u.GID), 10)
	}
	return s
}

// Account is a resolved --as-user: the ids a child process runs with.
type Account struct {
	Spec   string
	UID    uint32
	GID    uint32
	Groups []uint32 // supplementary groups
}

// Resolve looks the spec up in the user database: a NAME, or a UID
// without GID, takes the user's primary group and supplementary groups;
// UID:GID is taken as it is, with no supplementary groups (the ids need
// not exist, as in a container).
func (u UserSpec) Resolve() (Account, error) {
	a := Account{Spec: u.String(), UID: u.UID, GID: u.GID}
	if u.HasGID {
		return a, nil
	}
	var (
		pw  *user.User
		err error
	)
	if u.Name != "" {
		pw, err = user.Lookup(u.Name)
	} else {
		pw, err = user.LookupId(strconv.FormatUint(uint64(u.UID), 10))
	}
	if err != nil {
		if u.Name == "" {
			return a, fmt.Errorf("--as-user %s: no such user; give the group too (UID:GID): %w", u, err)
		}
		return a, fmt.Errorf("--as-user %s: %w", u, err)
	}
	uid, err1 := strconv.ParseUint(pw.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(pw.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return a, fmt.Errorf("--as-user %s: non-numeric ids %q:%q", u, pw.Uid, pw.Gid)
	}
	a.UID, a.GID = uint32(uid), uint32(gid)
	if ids, err := pw.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil && uint32(n) != a.GID {
				a.Groups = append(a.Groups, uint32(n))
			}
		}
	}
	return a, nil
}
