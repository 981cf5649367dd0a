package memstore_test

import (
	"errors"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/gateway/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) gateway.Store { return memstore.New() })
}

func TestNamed(t *testing.T) {
	var n memstore.Named
	a, b := n.Get("a"), n.Get("b")
	if a == b || n.Get("a") != a {
		t.Fatal("one store per name, the same one on every Get")
	}
	if _, err := a.Put(t.Context(), "k", []byte("v"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.Get("a").Get(t.Context(), "k"); err != nil {
		t.Fatalf("a key put through one Get, read through another: %v", err)
	}
}

// TestNamedOpen: mem://NAME[/PREFIX] opens one named store; any other form
// is an invalid URL.
func TestNamedOpen(t *testing.T) {
	var n memstore.Named
	reg := gateway.NewRegistry().Register("mem", n.Open)
	s, err := reg.Open(t.Context(), "mem://sink/out")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(t.Context(), "part-0", []byte("x"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.Get("sink").Get(t.Context(), "out/part-0"); err != nil {
		t.Fatalf("mem://sink/out keeps keys under out/ of store sink: %v", err)
	}
	for _, raw := range []string{"mem:sink", "mem:///x", "mem://u:p@sink", "mem://sink?k=v", "mem://sink/a/../b"} {
		if _, err := reg.Open(t.Context(), raw); !errors.Is(err, gateway.ErrInvalidURL) {
			t.Errorf("open %q: %v, want ErrInvalidURL", raw, err)
		}
	}
}
