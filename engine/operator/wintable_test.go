package operator

import (
	"math/rand/v2"
	"testing"
)

// TestWinTable checks the table against a map through puts, deletes,
// growth and reservations.
func TestWinTable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	tab := newWinTable(0)
	model := map[intWin]*win{}
	wins := make([]win, 64)
	for step := range 200000 {
		k := intWin{r.Int64N(300) - 50, r.Int64N(20) * 10000}
		switch op := r.IntN(10); {
		case op < 5:
			e := &wins[r.IntN(len(wins))]
			tab.Put(k, e)
			model[k] = e
		case op < 9:
			tab.Delete(k)
			delete(model, k)
		default:
			tab.Reserve(r.IntN(100))
		}
		if got := tab.Get(k); got != model[k] {
			t.Fatalf("step %d: Get(%v) = %p, want %p", step, k, got, model[k])
		}
		if step%1000 == 0 {
			if tab.Len() != len(model) {
				t.Fatalf("step %d: Len %d, want %d", step, tab.Len(), len(model))
			}
			n := 0
			tab.All(func(k intWin, e *win) {
				n++
				if model[k] != e {
					t.Fatalf("step %d: All gave %v → %p, want %p", step, k, e, model[k])
				}
			})
			for k, e := range model {
				if tab.Get(k) != e {
					t.Fatalf("step %d: lost %v", step, k)
				}
			}
			if n != len(model) {
				t.Fatalf("step %d: All gave %d entries, want %d", step, n, len(model))
			}
		}
	}
}
