package gateway

import "fmt"

// CondKind says which precondition a write carries.
type CondKind uint8

const (
	CondNone CondKind = iota
	CondIfAbsent
	CondIfMatch
)

// Cond is the precondition of a Put or Delete.
type Cond struct {
	Kind    CondKind
	Version Version // for CondIfMatch
}

// None is an unconditional write.
func None() Cond { return Cond{} }

// IfAbsent is a create-only write.
func IfAbsent() Cond { return Cond{Kind: CondIfAbsent} }

// IfMatch is a compare-and-swap on v.
func IfMatch(v Version) Cond { return Cond{Kind: CondIfMatch, Version: v} }

func (c Cond) String() string {
	switch c.Kind {
	case CondNone:
		return "none"
	case CondIfAbsent:
		return "if-absent"
	case CondIfMatch:
		return fmt.Sprintf("if-match(%s)", c.Version)
	}
	return fmt.Sprintf("cond(%d)", c.Kind)
}

// CheckPutCond validates c for a Put: a known kind, and a version for IfMatch.
func CheckPutCond(key string, c Cond) error {
	switch c.Kind {
	case CondNone, CondIfAbsent:
		return nil
	case CondIfMatch:
		if c.Version == "" {
			return E("put", key, ErrPrecondition, fmt.Errorf("if-match with an empty version"))
		}
		return nil
	}
	return E("put", key, ErrUnsupported, fmt.Errorf("condition %v", c))
}

// CheckDeleteCond validates c for a Delete: None or IfMatch with a version.
func CheckDeleteCond(key string, c Cond) error {
	switch c.Kind {
	case CondNone:
		return nil
	case CondIfMatch:
		if c.Version == "" {
			return E("delete", key, ErrPrecondition, fmt.Errorf("if-match with an empty version"))
		}
		return nil
	}
	return E("delete", key, ErrUnsupported, fmt.Errorf("condition %v on delete", c))
}
