package memstore_test

import (
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
